// The speed of the disk a models folder is on, measured the way the engine reads experts
// (waste::measureExpertReads: random whole records with direct I/O, as many in flight as the
// engine keeps): the largest container already in the folder is read, or the demo model's in
// the data folder when there is none. Measured once per folder per process. The Planner's
// release plan and `waste plan --config` both predict read times with it.
#pragma once

#include <QString>

struct FolderDisk {
    double gbPerSecond = 0; // 0: not measured
    double decodeGbPerSecond = 0; // the same reads beside a decode (0: not measured: gbPerSecond)
    // The compute time one record read cost a decode there (ExpertReadSpeed::
    // compute_seconds_per_read; 0: not measured). Its CPU part is nearly flat in the record's
    // size into huge pages (35-79 us from 2.4 to 9.6 MB on the development VM), so a
    // release's forecast charges it per read though its records differ in size.
    double cpuSecondsPerRead = 0;
    QString container;      // what was read
    QString why;            // when not measured: the reason, in a sentence
};

FolderDisk measureModelsFolderDisk(const QString &modelsFolder, const QString &dataFolder);
