// The states of a download job and of each of its files: one set of enums for the worker, the
// saved queue, the CLI and QML, which reads them as Download.JobState.Running and
// Download.FileState.Done instead of comparing words.
#pragma once

#include <QObject>
#include <QtQml/qqmlregistration.h>

namespace Download {
Q_NAMESPACE
QML_ELEMENT
// Both enums have Paused, Done and Failed: QML names them by enum (Download.JobState.Done).
Q_CLASSINFO("RegisterEnumClassesUnscoped", "false")

// Idle: no job at all (nothing queued); the others are a job's own states.
enum class JobState { Idle, Listing, Ready, Running, Paused, Done, Failed };
Q_ENUM_NS(JobState)

enum class FileState { Pending, Active, Paused, Verifying, Done, Failed };
Q_ENUM_NS(FileState)
} // namespace Download

using Download::FileState;
using Download::JobState;
