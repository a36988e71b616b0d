// AppSingleton<T>: the one pattern behind the app's QML singletons (AppSettings, EngineController,
// DownloadManager, ...). The application, or a test, builds each service once in C++ with its
// dependencies, before QML loads. QML_SINGLETON then finds T::create() here and hands QML that same
// object (owned by C++, never deleted by the QML engine), and C++ code without a pointer to it
// reaches it through T::instance(). The first object built is the instance until it is destroyed.
//
//   class AppSettings : public QObject, public AppSingleton<AppSettings> {
//       Q_OBJECT
//       QML_ELEMENT
//       QML_SINGLETON
//       ...
//
// Qt 6.4 prefers a default constructor over create(), so T keeps a constructor that takes arguments.
#pragma once

#include <QtQml/QJSEngine>

class QQmlEngine;

template <typename T>
class AppSingleton {
public:
    static T *instance() { return static_cast<T *>(s_current); }

    static T *create(QQmlEngine *, QJSEngine *)
    {
        T *t = instance();
        if (t)
            QJSEngine::setObjectOwnership(t, QJSEngine::CppOwnership);
        return t;
    }

    AppSingleton(const AppSingleton &) = delete;
    AppSingleton &operator=(const AppSingleton &) = delete;

protected:
    AppSingleton()
    {
        if (!s_current)
            s_current = this;
    }
    ~AppSingleton()
    {
        if (s_current == this)
            s_current = nullptr;
    }

private:
    static inline AppSingleton *s_current = nullptr;
};
