// ResponseStore: the Responses API's memory of past responses, so that a request can go on
// from one with `previous_response_id` instead of sending the whole conversation again.
// Each entry is the conversation as Responses items (every earlier input and output item,
// then this response's output); instructions are not kept, as OpenAI does not carry them
// over. Each entry also keeps the response object as it was answered, for
// GET /v1/responses/{id}. Bounded by count and by size: the oldest entries go first. Lives in
// memory only, for as long as the server object.
#pragma once

#include <QHash>
#include <QJsonArray>
#include <QJsonObject>
#include <QString>
#include <QStringList>

#include <optional>

class ResponseStore {
public:
    explicit ResponseStore(int maxEntries = 256, qint64 maxBytes = 64ll * 1024 * 1024)
        : m_maxEntries(maxEntries), m_maxBytes(maxBytes) {}

    // Keeps `items` under `id`, dropping the oldest entries past the bounds. A conversation
    // larger than the whole budget is not kept.
    void put(const QString &id, const QJsonArray &items, const QJsonObject &response = {});
    std::optional<QJsonArray> get(const QString &id) const;
    // The response as it was answered (nullopt when it is not kept).
    std::optional<QJsonObject> response(const QString &id) const;
    // False when nothing was kept under `id`.
    bool remove(const QString &id);

    int size() const { return int(m_order.size()); }
    qint64 bytes() const { return m_bytes; }

private:
    struct Entry {
        QJsonArray items;
        QJsonObject response;
        qint64 bytes = 0;
    };
    int m_maxEntries;
    qint64 m_maxBytes;
    qint64 m_bytes = 0;
    QHash<QString, Entry> m_entries;
    QStringList m_order; // oldest first
};
