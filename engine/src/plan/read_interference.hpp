// What an expert read costs the decode running beside it, measured rather than assumed.
//
// The process's CPU time per read (the probe's system calls and page pins) is only part of
// it: on the 2-core AMD EPYC development VM a read's CPU time measured 14 us, yet reads at
// 1.5-2 GB/s slowed a decode with every expert cached from 10 to 12.2 ms a token, 40-90 us a
// read (the host's exits to service the disk, the DMA's memory traffic, the reader's wake-ups
// preempting a compute thread that the other waits for at the next barrier). So the engine's
// largest decode kernel runs on the compute pool alone and with expert reads in flight, in
// alternating windows, and the compute time the reads took is divided among them.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace waste::plan {

struct ReadInterference {
    double secondsPerRead = 0; // compute time lost a read: the median of the rounds, >= 0
    double gbps = 0;           // the reads' speed while the compute ran (median)
    int rounds = 0;            // rounds measured (0: nothing could be measured)
};

// Random whole records of `recordBytes` from `banks`, `queueDepth` in flight, beside the
// decode kernel on a pool of `threads` (0: one per hardware thread). About 0.8 s.
ReadInterference measureReadInterference(const std::vector<std::string> &banks, int64_t recordBytes, int queueDepth,
                                         int threads = 0);

} // namespace waste::plan
