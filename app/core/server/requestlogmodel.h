// The live request log of the API server: one row per request, oldest first, updated in
// place when a request finishes (status, tokens, duration). Bounded: the oldest rows go
// when it is full. Changed on the GUI thread only.
#pragma once

#include <QAbstractListModel>
#include <QDateTime>
#include <QQmlEngine>

class RequestLogModel : public QAbstractListModel {
    Q_OBJECT
    QML_ELEMENT
    QML_UNCREATABLE("The API server owns its request log")
    Q_PROPERTY(int count READ rowCount NOTIFY countChanged)

public:
    enum Role {
        TimeRole = Qt::UserRole + 1,
        ClientRole,
        RouteRole,
        StatusRole,
        TokensRole,
        DurationRole,
        FinishedRole,
    };
    Q_ENUM(Role)

    explicit RequestLogModel(QObject *parent = nullptr, int capacity = 500);

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QHash<int, QByteArray> roleNames() const override;

    // Adds a row for a request that has just arrived; returns its key for finish().
    quint64 begin(const QString &client, const QString &route);
    // Sets the row's outcome. Unknown keys (rows already dropped) are ignored.
    void finish(quint64 key, int status, int tokens, qint64 durationMs);
    Q_INVOKABLE void clear();

    int capacity() const { return m_capacity; }

Q_SIGNALS:
    void countChanged();

private:
    struct Entry {
        quint64 key = 0;
        QDateTime time;
        QString client;
        QString route;
        int status = 0; // 0: in progress
        int tokens = 0;
        qint64 durationMs = -1;
    };
    int rowOf(quint64 key) const;

    QList<Entry> m_rows;
    int m_capacity;
    quint64 m_nextKey = 1;
};
