// ApiServer::Job: one completion request in flight, from its HTTP exchange to the engine
// request that answers it. Shared by the routing (apiserver.cpp) and the request
// lifecycle (apiserverjobs.cpp).
#pragma once

#include "server/apiserver.h"

#include "engine/generationhandle.h"
#include "server/apirequest.h"
#include <waste/chat.hpp>
#include "server/httpexchange.h"
#include "server/replyassembler.h"
#include "server/replydialect.h"
#include "server/requestimages.h"

#include <QElapsedTimer>
#include <QMetaObject>
#include <QString>

#include <memory>

struct ApiServer::Job {
    std::shared_ptr<HttpExchange> ex;
    GenerationHandle *handle = nullptr; // the engine's, until the request ends
    ApiRequest::Kind kind = ApiRequest::Chat;
    bool stream = false;
    bool includeUsage = false;
    waste::ChatFormat format{}; // the open model's (ModelInfo::chatFormat)
    std::unique_ptr<ChatReplyAssembler> reply; // chat: the parsed reply, turned into OpenAI deltas
    std::unique_ptr<ReplyDialect> dialect;     // Responses, Messages: their shapes of those deltas; null: Chat Completions
    QString id;
    QString model;
    qint64 created = 0;
    int promptTokens = 0;
    bool started = false;
    quint64 logKey = 0;
    QElapsedTimer clock;
    QMetaObject::Connection disconnect;
    RequestImages images; // the request's pictures as files, kept until it ends
};
