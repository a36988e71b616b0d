#include "model/expert_source.hpp"

#include "waste/waste.hpp"

#include <chrono>

namespace waste::model {

PreadExpertSource::PreadExpertSource(std::map<int, std::shared_ptr<format::ExpertBank>> banks, bool verifyCrc)
    : m_banks(std::move(banks)), m_verify(verifyCrc)
{
}

void PreadExpertSource::fetch(int layer, std::span<const int> experts, const Consumer &consume, const Hook &whileReading)
{
    if (whileReading)
        whileReading();
    auto it = m_banks.find(layer);
    if (it == m_banks.end())
        throw Error(ErrorCode::Format, "no expert bank for layer " + std::to_string(layer));
    const format::ExpertBank &bank = *it->second;
    m_buffer.resize(static_cast<size_t>(bank.recordBytes()));
    for (size_t i = 0; i < experts.size(); ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        bank.read(experts[i], m_buffer.data(), m_verify);
        m_stats.secondsIo += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        m_stats.misses += 1;
        m_stats.bytesRead += bank.recordBytes();
        consume(i, m_buffer.data());
    }
}

} // namespace waste::model
