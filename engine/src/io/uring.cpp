#include "io/uring.hpp"

#ifdef __linux__
#include <linux/io_uring.h>
#include <poll.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace waste::io {

#ifdef __linux__

struct Uring::Rings {
    int fd = -1;
    int wakeFd = -1;
    void *sqMap = nullptr, *cqMap = nullptr;
    size_t sqMapBytes = 0, cqMapBytes = 0;
    io_uring_sqe *sqes = nullptr;
    size_t sqesBytes = 0;
    unsigned *sqHead = nullptr, *sqTail = nullptr, *sqMask = nullptr, *sqArray = nullptr;
    unsigned sqEntries = 0;
    unsigned *cqHead = nullptr, *cqTail = nullptr, *cqMask = nullptr;
    io_uring_cqe *cqes = nullptr;

    ~Rings()
    {
        if (sqes)
            ::munmap(sqes, sqesBytes);
        if (cqMap && cqMap != sqMap)
            ::munmap(cqMap, cqMapBytes);
        if (sqMap)
            ::munmap(sqMap, sqMapBytes);
        if (fd >= 0)
            ::close(fd);
        if (wakeFd >= 0)
            ::close(wakeFd);
    }

    io_uring_sqe *nextSqe()
    {
        const unsigned tail = *sqTail; // this thread alone moves the tail
        if (tail - __atomic_load_n(sqHead, __ATOMIC_ACQUIRE) >= sqEntries)
            return nullptr;
        const unsigned i = tail & *sqMask;
        io_uring_sqe *sqe = &sqes[i];
        std::memset(sqe, 0, sizeof *sqe);
        sqArray[i] = i;
        return sqe;
    }
    void publish() { __atomic_store_n(sqTail, *sqTail + 1, __ATOMIC_RELEASE); }
};

namespace {
int setup(unsigned entries, io_uring_params *p) { return int(::syscall(__NR_io_uring_setup, entries, p)); }
int enter(int fd, unsigned submit, unsigned wait, unsigned flags)
{
    return int(::syscall(__NR_io_uring_enter, fd, submit, wait, flags, nullptr, 0));
}
} // namespace

std::unique_ptr<Uring> Uring::open(unsigned entries, std::string &whyNot)
{
    auto rings = std::make_unique<Rings>();
    io_uring_params p{};
    rings->fd = setup(entries, &p);
    if (rings->fd < 0) {
        whyNot = std::string("io_uring_setup refused: ") + std::strerror(errno);
        return nullptr;
    }
    // IORING_OP_READ came with 5.6, as did this feature bit.
    if (!(p.features & IORING_FEAT_RW_CUR_POS)) {
        whyNot = "io_uring without plain reads (kernel older than 5.6)";
        return nullptr;
    }
    Rings &r = *rings;
    r.sqMapBytes = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r.cqMapBytes = p.cq_off.cqes + p.cq_entries * sizeof(io_uring_cqe);
    const bool single = p.features & IORING_FEAT_SINGLE_MMAP;
    if (single)
        r.sqMapBytes = r.cqMapBytes = std::max(r.sqMapBytes, r.cqMapBytes);
    auto map = [&](size_t bytes, off_t what) -> void * {
        void *m = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, r.fd, what);
        return m == MAP_FAILED ? nullptr : m;
    };
    r.sqMap = map(r.sqMapBytes, IORING_OFF_SQ_RING);
    r.cqMap = single ? r.sqMap : map(r.cqMapBytes, IORING_OFF_CQ_RING);
    r.sqesBytes = p.sq_entries * sizeof(io_uring_sqe);
    r.sqes = static_cast<io_uring_sqe *>(map(r.sqesBytes, IORING_OFF_SQES));
    if (!r.sqMap || !r.cqMap || !r.sqes) {
        whyNot = std::string("io_uring rings could not be mapped: ") + std::strerror(errno);
        return nullptr;
    }
    auto *sq = static_cast<uint8_t *>(r.sqMap);
    auto *cq = static_cast<uint8_t *>(r.cqMap);
    r.sqHead = reinterpret_cast<unsigned *>(sq + p.sq_off.head);
    r.sqTail = reinterpret_cast<unsigned *>(sq + p.sq_off.tail);
    r.sqMask = reinterpret_cast<unsigned *>(sq + p.sq_off.ring_mask);
    r.sqArray = reinterpret_cast<unsigned *>(sq + p.sq_off.array);
    r.sqEntries = p.sq_entries;
    r.cqHead = reinterpret_cast<unsigned *>(cq + p.cq_off.head);
    r.cqTail = reinterpret_cast<unsigned *>(cq + p.cq_off.tail);
    r.cqMask = reinterpret_cast<unsigned *>(cq + p.cq_off.ring_mask);
    r.cqes = reinterpret_cast<io_uring_cqe *>(cq + p.cq_off.cqes);
    r.wakeFd = ::eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
    if (r.wakeFd < 0) {
        whyNot = std::string("eventfd: ") + std::strerror(errno);
        return nullptr;
    }
    std::unique_ptr<Uring> u(new Uring);
    u->m_r = std::move(rings);
    return u;
}

Uring::~Uring() = default;

bool Uring::queueRead(int fd, void *dst, uint32_t bytes, int64_t offset, uint64_t userData)
{
    io_uring_sqe *sqe = m_r->nextSqe();
    if (!sqe)
        return false;
    sqe->opcode = IORING_OP_READ;
    sqe->fd = fd;
    sqe->addr = reinterpret_cast<uint64_t>(dst);
    sqe->len = bytes;
    sqe->off = uint64_t(offset);
    sqe->user_data = userData;
    m_r->publish();
    return true;
}

bool Uring::queueWakeWatch(uint64_t userData)
{
    io_uring_sqe *sqe = m_r->nextSqe();
    if (!sqe)
        return false;
    sqe->opcode = IORING_OP_POLL_ADD;
    sqe->fd = m_r->wakeFd;
    sqe->poll32_events = POLLIN;
    sqe->user_data = userData;
    m_r->publish();
    return true;
}

int Uring::submit(bool wait)
{
    // Not yet taken by the kernel: what lies between its head and our tail.
    const unsigned queued = *m_r->sqTail - __atomic_load_n(m_r->sqHead, __ATOMIC_ACQUIRE);
    if (queued == 0 && !wait)
        return 0;
    const int r = enter(m_r->fd, queued, wait ? 1 : 0, wait ? IORING_ENTER_GETEVENTS : 0);
    return r < 0 ? -errno : 0;
}

void Uring::reap(const std::function<void(uint64_t, int)> &fn)
{
    unsigned head = *m_r->cqHead;
    for (;;) {
        const unsigned tail = __atomic_load_n(m_r->cqTail, __ATOMIC_ACQUIRE);
        if (head == tail)
            break;
        while (head != tail) {
            const io_uring_cqe &c = m_r->cqes[head & *m_r->cqMask];
            const uint64_t data = c.user_data;
            const int res = c.res;
            ++head;
            __atomic_store_n(m_r->cqHead, head, __ATOMIC_RELEASE);
            fn(data, res);
        }
    }
}

void Uring::wake()
{
    const uint64_t one = 1;
    [[maybe_unused]] ssize_t n = ::write(m_r->wakeFd, &one, sizeof one); // EAGAIN: already signalled
}

void Uring::clearWake()
{
    uint64_t v = 0;
    [[maybe_unused]] ssize_t n = ::read(m_r->wakeFd, &v, sizeof v);
}

#else // io_uring is Linux's

struct Uring::Rings {};
std::unique_ptr<Uring> Uring::open(unsigned, std::string &whyNot)
{
    whyNot = "io_uring is Linux only";
    return nullptr;
}
Uring::~Uring() = default;
bool Uring::queueRead(int, void *, uint32_t, int64_t, uint64_t) { return false; }
bool Uring::queueWakeWatch(uint64_t) { return false; }
int Uring::submit(bool) { return -ENOSYS; }
void Uring::reap(const std::function<void(uint64_t, int)> &) {}
void Uring::wake() {}
void Uring::clearWake() {}

#endif

} // namespace waste::io
