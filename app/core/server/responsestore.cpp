#include "server/responsestore.h"

#include <QJsonDocument>

void ResponseStore::put(const QString &id, const QJsonArray &items, const QJsonObject &response)
{
    remove(id);
    // The compact JSON size stands for the memory an entry holds (images inline as data URLs
    // dominate it), which is what the bound is about.
    const qint64 bytes = QJsonDocument(items).toJson(QJsonDocument::Compact).size()
                         + (response.isEmpty() ? 0 : QJsonDocument(response).toJson(QJsonDocument::Compact).size());
    if (bytes > m_maxBytes || m_maxEntries <= 0)
        return;
    while (!m_order.isEmpty() && (m_order.size() >= m_maxEntries || m_bytes + bytes > m_maxBytes))
        remove(m_order.first());
    m_entries.insert(id, Entry{items, response, bytes});
    m_order.append(id);
    m_bytes += bytes;
}

std::optional<QJsonArray> ResponseStore::get(const QString &id) const
{
    const auto it = m_entries.constFind(id);
    if (it == m_entries.constEnd())
        return std::nullopt;
    return it->items;
}

std::optional<QJsonObject> ResponseStore::response(const QString &id) const
{
    const auto it = m_entries.constFind(id);
    if (it == m_entries.constEnd())
        return std::nullopt;
    return it->response;
}

bool ResponseStore::remove(const QString &id)
{
    const auto it = m_entries.find(id);
    if (it == m_entries.end())
        return false;
    m_bytes -= it->bytes;
    m_entries.erase(it);
    m_order.removeOne(id);
    return true;
}
