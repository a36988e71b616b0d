// What the API server suites set up alike: an engine with no model yet, the API server in
// front of it on a free loopback port, and an HTTP client for that port. Members are destroyed
// client first, engine last (the server holds on to the engine).
#pragma once

#include "engine/enginecontroller.h"
#include "httptestclient.h"
#include "server/apiserver.h"

#include <memory>

struct ApiServerTestbed {
    EngineController engine{nullptr};
    ApiServer server{&engine, nullptr};
    std::unique_ptr<HttpTestClient> client;

    ApiServerTestbed() { server.setPort(0); }

    // Starts the server (on a free port, unless one was set) and points a new client at it;
    // false when it cannot listen (server.errorString() says why).
    bool listen()
    {
        if (!server.start())
            return false;
        client = std::make_unique<HttpTestClient>(server.boundPort());
        return true;
    }
};
