// RequestImages: the pictures of one API request as files the engine reads. A data-URL
// image is written to a temporary folder that lives as long as the request (the engine
// reads it while it prefills); each picture becomes the media block the chat page and the
// CLI write for the same file.
#pragma once

#include "server/apirequest.h"

#include <QStringList>
#include <QTemporaryDir>

#include <memory>

class RequestImages {
public:
    // The media block for one image part, its file added to paths(). Throws ApiError: 400
    // for a local file or picture the engine cannot read (named as the client sent it),
    // 500 when a temporary file cannot be written.
    QString mediaBlock(const ContentPart &part);
    // The files, in the order their blocks were asked for: the request's image order.
    const QStringList &paths() const { return m_paths; }

private:
    std::unique_ptr<QTemporaryDir> m_dir;
    QStringList m_paths;
};
