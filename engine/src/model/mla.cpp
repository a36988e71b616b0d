// Multi-head latent attention for one token, with kv_b_proj absorbed into the query
// (scores against the cached latent) and the output (values summed in latent space):
// the cache holds only dc + dr floats per position. Kimi-Linear and K3 apply no rotary
// embedding; the DeepSeek-V3 family rotates the dr dims of each query head and of the
// shared key before it is cached (RoPE with YaRN, yarn.hpp).
#include "model/forward.hpp"
#include "model/ops.hpp"
#include "quant/trunk_matvec.hpp"
#include "waste/waste.hpp"

#include <algorithm>
#include <cmath>

namespace waste::model {

void Forward::mla(int layer, const float *a, float *out, LayerState &st, int pos)
{
    const MlaWeights &w = m_w.layers[static_cast<size_t>(layer)].m;
    const int64_t nh = m_c.heads, dn = m_c.qkNope, dr = m_c.qkRope, dv = m_c.vHead, dc = m_c.kvLora;
    const int64_t dq = dn + dr, lat = dc + dr;
    Vec q(nh * dq), c(lat), o(nh * dv);
    if (w.qa) {
        Vec t(m_c.qLora);
        quant::matvec(*w.qa, a, t.data(), m_pool);
        rmsNorm(t.data(), w.qaNorm->f32.data(), t.data(), m_c.qLora, m_c.eps);
        quant::matvec(*w.qb, t.data(), q.data(), m_pool);
    } else {
        quant::matvec(*w.q, a, q.data(), m_pool);
    }
    quant::matvec(*w.kva, a, c.data(), m_pool);
    float *slot = st.latent.data() + int64_t(pos) * lat;
    rmsNorm(c.data(), w.kvaNorm->f32.data(), slot, dc, m_c.eps);
    for (int64_t i = 0; i < dr; ++i)
        slot[dc + i] = c[dc + i];
    if (m_rope.enabled()) {
        m_rope.rotate(slot + dc, pos);
        for (int64_t h = 0; h < nh; ++h)
            m_rope.rotate(q.data() + h * dq + dn, pos);
    }

    const int64_t n = pos + 1;
    const float invScale = m_rope.scoreScale();
    // Heads are independent (own output slice): split them over threads.
    m_pool.forRange(nh, m_pool.grainFor(nh, (dn * dc * 2 + n * (2 * dc + dr) + dv * dc) / 4), [&](int64_t h0, int64_t h1) {
        Vec qabs(dc), row(dc), z(n), ctx(dc);
        for (int64_t h = h0; h < h1; ++h) {
            const float *qN = q.data() + h * dq, *qR = qN + dn;
            std::fill(qabs.begin(), qabs.end(), 0.0f);
            for (int64_t i = 0; i < dn; ++i) {
                w.kvb->readRow(h * (dn + dv) + i, row.data());
                for (int64_t k = 0; k < dc; ++k)
                    qabs[k] += qN[i] * row[k];
            }
            float zmax = -INFINITY;
            for (int64_t s = 0; s < n; ++s) {
                const float *cs = st.latent.data() + s * lat;
                float d1 = 0.0f, d2 = 0.0f;
                for (int64_t k = 0; k < dc; ++k)
                    d1 += qabs[k] * cs[k];
                for (int64_t k = 0; k < dr; ++k)
                    d2 += qR[k] * cs[dc + k];
                z[s] = (d1 + d2) * invScale;
                zmax = std::max(zmax, z[s]);
            }
            float sum = 0.0f;
            for (int64_t s = 0; s < n; ++s) {
                z[s] = std::exp(z[s] - zmax);
                sum += z[s];
            }
            std::fill(ctx.begin(), ctx.end(), 0.0f);
            for (int64_t s = 0; s < n; ++s) {
                const float al = z[s] / sum;
                const float *cs = st.latent.data() + s * lat;
                for (int64_t k = 0; k < dc; ++k)
                    ctx[k] += al * cs[k];
            }
            for (int64_t i = 0; i < dv; ++i)
                o[h * dv + i] = quant::rowDot(*w.kvb, h * (dn + dv) + dn + i, ctx.data());
        }
    });
    if (w.g) {
        Vec g(nh * dv);
        quant::matvec(*w.g, a, g.data(), m_pool);
        for (int64_t i = 0; i < nh * dv; ++i)
            o[i] *= sigmoid(g[i]);
    }
    quant::matvec(*w.o, o.data(), out, m_pool);
}

} // namespace waste::model
