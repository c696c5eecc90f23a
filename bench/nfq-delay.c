/* nfq-delay: a fixed-delay line for the benchmark harness on kernels built
 * without sch_netem.  Every packet that iptables sends to NFQUEUE QUEUE is
 * held DELAY_US microseconds and then accepted, in arrival order.  The
 * harness runs it in the client's network namespace, pinned to the client's
 * core, so none of its work lands on the server's core.
 *
 *     nfq-delay QUEUE DELAY_US
 *
 * Packet ids grow in arrival order and every packet waits the same time, so
 * the queue is a FIFO and one batch verdict (all ids <= n) releases every
 * packet that is due.  SIGTERM/SIGINT: accept what is still held, print the
 * counts, exit 0.  Built by bench/adfbench.py with
 *     cc -O2 -o nfq-delay nfq-delay.c -lnetfilter_queue -lnfnetlink
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <linux/netfilter.h>
#include <libnetfilter_queue/libnetfilter_queue.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define RING (1u << 20)

static struct { uint32_t id; uint64_t due; } ring[RING];
static size_t head, tail;           /* head: oldest held; tail: next free */
static uint64_t delay_ns, held_max, total, overflow;
static volatile sig_atomic_t stop;

static uint64_t now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

static size_t held(void) { return (tail + RING - head) % RING; }

static int on_packet(struct nfq_q_handle *qh, struct nfgenmsg *msg,
                     struct nfq_data *nfa, void *data)
{
    struct nfqnl_msg_packet_hdr *ph = nfq_get_msg_packet_hdr(nfa);
    uint32_t id;
    (void)msg; (void)data;
    if (!ph)
        return 0;
    id = ntohl(ph->packet_id);
    total++;
    if (held() == RING - 1) {        /* full: let it through at once */
        overflow++;
        return nfq_set_verdict(qh, id, NF_ACCEPT, 0, NULL);
    }
    ring[tail].id = id;
    ring[tail].due = now_ns() + delay_ns;
    tail = (tail + 1) % RING;
    if (held() > held_max)
        held_max = held();
    return 0;
}

/* Accept everything due by 'now' (everything when now == UINT64_MAX). */
static void release(struct nfq_q_handle *qh, uint64_t now)
{
    size_t last = RING;
    while (head != tail && ring[head].due <= now) {
        last = head;
        head = (head + 1) % RING;
    }
    if (last != RING)
        nfq_set_verdict_batch(qh, ring[last].id, NF_ACCEPT);
}

static void on_signal(int sig) { (void)sig; stop = 1; }

int main(int argc, char **argv)
{
    struct nfq_handle *h;
    struct nfq_q_handle *qh;
    char buf[65536] __attribute__((aligned));
    int fd, one = 1;
    struct sigaction sa;

    if (argc != 3) {
        fprintf(stderr, "usage: nfq-delay QUEUE DELAY_US\n");
        return 2;
    }
    delay_ns = strtoull(argv[2], NULL, 10) * 1000u;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);

    h = nfq_open();
    if (!h) {
        perror("nfq-delay: nfq_open");
        return 1;
    }
    nfq_bind_pf(h, AF_INET);
    qh = nfq_create_queue(h, (uint16_t)atoi(argv[1]), on_packet, NULL);
    if (!qh) {
        perror("nfq-delay: nfq_create_queue");
        return 1;
    }
    /* Metadata only: the verdict needs the id, not the payload.  GSO:
     * take large segments as they are instead of having the kernel split
     * them for us. */
    if (nfq_set_mode(qh, NFQNL_COPY_META, 0) < 0
        || nfq_set_queue_maxlen(qh, RING / 2) < 0) {
        perror("nfq-delay: queue setup");
        return 1;
    }
    nfq_set_queue_flags(qh, NFQA_CFG_F_GSO, NFQA_CFG_F_GSO);
    fd = nfq_fd(h);
    nfnl_rcvbufsiz(nfq_nfnlh(h), 32 << 20);
    setsockopt(fd, SOL_NETLINK, NETLINK_NO_ENOBUFS, &one, sizeof one);
    printf("nfq-delay: queue %s, %s us\n", argv[1], argv[2]);
    fflush(stdout);

    while (!stop) {
        struct pollfd p = { fd, POLLIN, 0 };
        struct timespec ts, *tsp = NULL;
        uint64_t now = now_ns();
        ssize_t n;

        release(qh, now);
        if (head != tail) {
            uint64_t wait = ring[head].due > now ? ring[head].due - now : 0;
            ts.tv_sec = (time_t)(wait / 1000000000u);
            ts.tv_nsec = (long)(wait % 1000000000u);
            tsp = &ts;
        }
        if (ppoll(&p, 1, tsp, NULL) < 0) {
            if (errno == EINTR)
                continue;
            perror("nfq-delay: ppoll");
            break;
        }
        if (!(p.revents & POLLIN))
            continue;
        while ((n = recv(fd, buf, sizeof buf, MSG_DONTWAIT)) > 0)
            nfq_handle_packet(h, buf, (int)n);
        if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR
            && errno != ENOBUFS) {
            perror("nfq-delay: recv");
            break;
        }
    }
    release(qh, UINT64_MAX);
    printf("nfq-delay: %llu packets, at most %llu held, %llu passed undelayed "
           "(ring full)\n", (unsigned long long)total,
           (unsigned long long)held_max, (unsigned long long)overflow);
    nfq_destroy_queue(qh);
    nfq_close(h);
    return 0;
}
