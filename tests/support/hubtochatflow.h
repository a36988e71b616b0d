// The way from a hub repository to a chat, step by step, as a person goes it in the real
// main window offscreen (tst_flow, tst_flow_families): a tiny release served by a loopback
// hub (FaultyHub, as HF_ENDPOINT), the repository typed on the Models page, Download, the
// Convert page filled in and started from the top of the page, Done without stale notices
// and the library listing the container, "Open in chat", a message sent and answered.
// Each step checks what the person sees (QVERIFY: after a call, stop when
// QTest::currentTestFailed()) and takes a screenshot <build>/screenshots/<prefix>-N-step.png.
#pragma once

#include "faultyhub.h"

#include <QString>

#include <memory>

class QQmlApplicationEngine;
class QQuickItem;
class QQuickWindow;
class ConversionJob;
class ModelLibrary;
struct StudioServices;

class HubToChatFlow {
public:
    // `prefix` names the screenshots ("flow", "flow-deepseek-v3").
    explicit HubToChatFlow(QString prefix);
    ~HubToChatFlow();

    // Serves every file under `folder` (a model in the Hugging Face layout) as `repo`.
    void publish(const QString &repo, const QString &folder);
    // Creates the app's services with `modelsFolder` (made by the app if missing), shows the
    // main window on the Models page.
    void showWindow(const QString &modelsFolder);
    // Types the repository, downloads it and waits until every file is verified.
    void download(const QString &repo);
    // Convert, from the Models page: the Convert page filled in for the download and
    // planned; `expectExperts`, when given, the expert option chosen by default ("native", ...).
    void convert(const QString &expectExperts = {});
    // "Open in chat": the chat page with the model open.
    void openInChat();
    // Types `text` in the message box and sends it with Return; waits for the answer.
    void send(const QString &text, int maxTokens);
    // The library marks the open model.
    void checkLibraryMarksOpenModel();

    void shot(const QString &step);

    QQuickWindow *window() const { return m_window; }
    StudioServices *services() const { return m_services.get(); }
    QString downloadFolder() const { return m_download; }
    QString container() const { return m_container; }

private:
    QString m_prefix;
    FaultyHub m_hub;
    std::unique_ptr<StudioServices> m_services;
    std::unique_ptr<QQmlApplicationEngine> m_qml;
    QQuickWindow *m_window = nullptr;
    QString m_download;
    QString m_container;
    QString m_models;
};
