#include "server/requestlogmodel.h"

RequestLogModel::RequestLogModel(QObject *parent, int capacity)
    : QAbstractListModel(parent), m_capacity(qMax(1, capacity))
{
}

int RequestLogModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_rows.size());
}

QVariant RequestLogModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const Entry &e = m_rows.at(index.row());
    switch (role) {
    case Qt::DisplayRole:
        return QStringLiteral("%1 %2 %3 %4").arg(e.time.toString(QStringLiteral("HH:mm:ss")), e.client, e.route,
                                                 e.status ? QString::number(e.status) : QStringLiteral("…"));
    case TimeRole:
        return e.time;
    case ClientRole:
        return e.client;
    case RouteRole:
        return e.route;
    case StatusRole:
        return e.status;
    case TokensRole:
        return e.tokens;
    case DurationRole:
        return e.durationMs;
    case FinishedRole:
        return e.status != 0;
    default:
        return {};
    }
}

QHash<int, QByteArray> RequestLogModel::roleNames() const
{
    return {{Qt::DisplayRole, "display"}, {TimeRole, "time"},         {ClientRole, "client"},
            {RouteRole, "route"},         {StatusRole, "status"},     {TokensRole, "tokens"},
            {DurationRole, "durationMs"}, {FinishedRole, "finished"}};
}

quint64 RequestLogModel::begin(const QString &client, const QString &route)
{
    if (m_rows.size() >= m_capacity) {
        const int drop = int(m_rows.size()) - m_capacity + 1;
        beginRemoveRows({}, 0, drop - 1);
        m_rows.remove(0, drop);
        endRemoveRows();
    }
    Entry e;
    e.key = m_nextKey++;
    e.time = QDateTime::currentDateTime();
    e.client = client;
    e.route = route;
    const int row = int(m_rows.size());
    beginInsertRows({}, row, row);
    m_rows.append(e);
    endInsertRows();
    Q_EMIT countChanged();
    return e.key;
}

int RequestLogModel::rowOf(quint64 key) const
{
    for (int i = int(m_rows.size()) - 1; i >= 0; --i)
        if (m_rows[i].key == key)
            return i;
    return -1;
}

void RequestLogModel::finish(quint64 key, int status, int tokens, qint64 durationMs)
{
    const int row = rowOf(key);
    if (row < 0)
        return;
    Entry &e = m_rows[row];
    e.status = status;
    e.tokens = tokens;
    e.durationMs = durationMs;
    const QModelIndex i = index(row);
    Q_EMIT dataChanged(i, i);
}

void RequestLogModel::clear()
{
    if (m_rows.isEmpty())
        return;
    beginResetModel();
    m_rows.clear();
    endResetModel();
    Q_EMIT countChanged();
}
