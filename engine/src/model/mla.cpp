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

// n tokens in chunk order, token t at position pos[t] of *st[t] (tokens of one sequence are
// adjacent): the projections from the inputs run for the whole chunk at once, each token
// then writes its latent and attends over its own cache, then the gate and the output
// projection run for the whole chunk. Each token's values are those it gets alone.
void Forward::mla(int layer, int n, const float *a, float *out, LayerState *const *st, const int *pos)
{
    const MlaWeights &w = m_w.layers[static_cast<size_t>(layer)].m;
    const int64_t nh = m_c.heads, dn = m_c.qkNope, dr = m_c.qkRope, dv = m_c.vHead, dc = m_c.kvLora;
    const int64_t dq = dn + dr, lat = dc + dr, Hd = m_c.hidden;
    Vec qAll(static_cast<size_t>(n * nh * dq)), cAll(static_cast<size_t>(n * lat)), oAll(static_cast<size_t>(n * nh * dv));
    if (w.qa) {
        const int64_t ql = m_c.qLora;
        Vec t(static_cast<size_t>(n * ql));
        quant::matvecs(*w.qa, n, a, Hd, t.data(), ql, m_pool);
        for (int i = 0; i < n; ++i)
            rmsNorm(t.data() + i * ql, w.qaNorm->f32.data(), t.data() + i * ql, ql, m_c.eps);
        quant::matvecs(*w.qb, n, t.data(), ql, qAll.data(), nh * dq, m_pool);
    } else {
        quant::matvecs(*w.q, n, a, Hd, qAll.data(), nh * dq, m_pool);
    }
    quant::matvecs(*w.kva, n, a, Hd, cAll.data(), lat, m_pool);
    for (int t = 0; t < n; ++t) {
        LayerState &s = *st[t];
        const int p = pos[t];
        float *q = qAll.data() + t * nh * dq, *c = cAll.data() + t * lat, *o = oAll.data() + t * nh * dv;
        float *slot = s.latent.data() + int64_t(p) * lat;
        rmsNorm(c, w.kvaNorm->f32.data(), slot, dc, m_c.eps);
        for (int64_t i = 0; i < dr; ++i)
            slot[dc + i] = c[dc + i];
        if (m_rope.enabled()) {
            m_rope.rotate(slot + dc, p);
            for (int64_t h = 0; h < nh; ++h)
                m_rope.rotate(q + h * dq + dn, p);
        }
        attendMla(layer, q, o, s, p);
    }
    if (w.g) {
        Vec g(static_cast<size_t>(n * nh * dv));
        quant::matvecs(*w.g, n, a, Hd, g.data(), nh * dv, m_pool);
        for (int64_t i = 0; i < n * nh * dv; ++i)
            oAll[i] *= sigmoid(g[i]);
    }
    quant::matvecs(*w.o, n, oAll.data(), nh * dv, out, Hd, m_pool);
}

// One token's attention over its cache (positions 0..pos), q already rotated: o per head.
void Forward::attendMla(int layer, const float *q, float *o, const LayerState &st, int pos)
{
    const MlaWeights &w = m_w.layers[static_cast<size_t>(layer)].m;
    const int64_t nh = m_c.heads, dn = m_c.qkNope, dr = m_c.qkRope, dv = m_c.vHead, dc = m_c.kvLora;
    const int64_t dq = dn + dr, lat = dc + dr;
    const int64_t n = pos + 1;
    const float invScale = m_rope.scoreScale();
    // Heads are independent (own output slice): split them over threads.
    m_pool.forRange(nh, m_pool.grainFor(nh, (dn * dc * 2 + n * (2 * dc + dr) + dv * dc) / 4), [&](int64_t h0, int64_t h1) {
        Vec qabs(dc), row(dc), z(n), ctx(dc);
        for (int64_t h = h0; h < h1; ++h) {
            const float *qN = q + h * dq, *qR = qN + dn;
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
}

} // namespace waste::model
