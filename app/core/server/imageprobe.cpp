#include "imageprobe.h"

namespace {

quint32 be16(const QByteArray &b, qsizetype i)
{
    return (quint32(quint8(b[i])) << 8) | quint8(b[i + 1]);
}
quint32 be32(const QByteArray &b, qsizetype i)
{
    return (be16(b, i) << 16) | be16(b, i + 2);
}
quint32 le16(const QByteArray &b, qsizetype i)
{
    return quint8(b[i]) | (quint32(quint8(b[i + 1])) << 8);
}
quint32 le24(const QByteArray &b, qsizetype i)
{
    return le16(b, i) | (quint32(quint8(b[i + 2])) << 16);
}
qint32 le32(const QByteArray &b, qsizetype i)
{
    return qint32(le16(b, i) | (le16(b, i + 2) << 16));
}

QSize jpegSize(const QByteArray &b)
{
    qsizetype i = 2;
    while (i + 9 < b.size()) {
        if (quint8(b[i]) != 0xFF)
            return {};
        const quint8 marker = quint8(b[i + 1]);
        if (marker == 0xFF) { // fill byte
            ++i;
            continue;
        }
        if (marker == 0xD8 || marker == 0x01 || (marker >= 0xD0 && marker <= 0xD7)) {
            i += 2;
            continue;
        }
        const quint32 len = be16(b, i + 2);
        // SOF0..SOF15 except DHT (C4), JPG (C8) and DAC (CC) carry the frame size.
        if (marker >= 0xC0 && marker <= 0xCF && marker != 0xC4 && marker != 0xC8 && marker != 0xCC)
            return QSize(int(be16(b, i + 7)), int(be16(b, i + 5)));
        if (len < 2)
            return {};
        i += 2 + len;
    }
    return {};
}

} // namespace

QSize probeImageSize(const QByteArray &b)
{
    if (b.size() >= 24 && b.startsWith("\x89PNG\r\n\x1a\n"))
        return QSize(int(be32(b, 16)), int(be32(b, 20)));
    if (b.size() >= 4 && quint8(b[0]) == 0xFF && quint8(b[1]) == 0xD8)
        return jpegSize(b);
    if (b.size() >= 10 && (b.startsWith("GIF87a") || b.startsWith("GIF89a")))
        return QSize(int(le16(b, 6)), int(le16(b, 8)));
    if (b.size() >= 26 && b.startsWith("BM"))
        return QSize(qAbs(le32(b, 18)), qAbs(le32(b, 22)));
    if (b.size() >= 30 && b.startsWith("RIFF") && b.mid(8, 4) == "WEBP") {
        const QByteArray kind = b.mid(12, 4);
        if (kind == "VP8X")
            return QSize(int(le24(b, 24)) + 1, int(le24(b, 27)) + 1);
        if (kind == "VP8 " && b.size() >= 30)
            return QSize(int(le16(b, 26) & 0x3FFF), int(le16(b, 28) & 0x3FFF));
        if (kind == "VP8L" && b.size() >= 25) {
            const quint32 bits = quint32(le16(b, 21)) | (quint32(le16(b, 23)) << 16);
            return QSize(int(bits & 0x3FFF) + 1, int((bits >> 14) & 0x3FFF) + 1);
        }
    }
    return {};
}
