/*
 * The scoreboard: one slot per child process in shared memory, written
 * only by its child (counters) and by the master (pid, generation, state
 * at fork and reap). Readers (the status module, tests) tolerate a torn
 * read of a counter: every field is a naturally aligned 64-bit word.
 *
 * The retired totals in the header are the master's alone: when it reaps
 * a child it adds the counters the slot holds (read as numbers, nothing
 * else the child wrote is believed) and takes the slot out of the live
 * set, both under `seq` (odd while it writes). Live slots plus the
 * retired totals read between two equal even values of `seq` never count
 * a child twice or not at all, so the server's totals never go back.
 */

#ifndef GN_CORE_SCOREBOARD_H_INCLUDED
#define GN_CORE_SCOREBOARD_H_INCLUDED

#include "gn_config.h"


/* Twice the maximum children: old and new generations during a reload. */
#define GN_SB_SLOTS   (2 * GN_MAX_CHILDREN)

typedef enum {
    GN_SB_FREE = 0,
    GN_SB_STARTING,
    GN_SB_RUNNING,
    GN_SB_DRAINING,
    GN_SB_EXITED
} gn_sb_state_e;

/* Counters by protocol, and the trips of the HTTP/2 limits: in a slot
 * and in the retired totals alike. */
typedef struct {
    uint64_t    h1_requests;
    uint64_t    h2_requests;
    uint64_t    h2_connections;  /* HTTP/2 ones, as they start */
    uint64_t    h2_refused;      /* streams past the concurrency limit */
    uint64_t    h2_glitch_limit; /* connections past http2_max_glitches */
    uint64_t    h2_flood;        /* ... past nghttp2's flood limits (ACKs
                                    queued, CONTINUATION, resets) */
    uint64_t    h2_header_limit; /* heads past their size limit (431) */
    uint64_t    h2_timeouts;     /* streams, or connections with a head
                                    or output stuck, cut by a timeout */
    uint64_t    h2_client_resets;  /* RST_STREAM frames the client sent */
} gn_sb_proto_t;

#define GN_SB_PROTO_N   (sizeof(gn_sb_proto_t) / sizeof(uint64_t))

typedef struct {
    int64_t     pid;
    uint64_t    generation;
    uint64_t    state;           /* gn_sb_state_e */
    uint64_t    started;         /* wall clock, seconds */
    uint64_t    connections;     /* open now */
    uint64_t    accepted;
    uint64_t    requests;
    uint64_t    bytes_in;
    uint64_t    bytes_out;
    uint64_t    status[6];       /* responses by class: [1]..[5] */
    uint64_t    tls_full;        /* handshakes */
    uint64_t    tls_resumed;
    uint64_t    tls_failed;
    uint64_t    h2_open;         /* HTTP/2 connections open now */
    uint64_t    h2_streams;      /* ... and their streams */
    gn_sb_proto_t  proto;
    uint64_t    pad[1];
} gn_sb_slot_t;

/* The counters of every child reaped since the master started. */
typedef struct {
    uint64_t    seq;             /* odd while the master folds a child */
    uint64_t    children;        /* folded so far */
    uint64_t    accepted;
    uint64_t    requests;
    uint64_t    bytes_in;
    uint64_t    bytes_out;
    uint64_t    status[6];
    uint64_t    tls_full;
    uint64_t    tls_resumed;
    uint64_t    tls_failed;
    gn_sb_proto_t  proto;
    uint64_t    prev_master;     /* the old master whose totals are still
                                    read from its scoreboard; 0: none */
} gn_sb_retired_t;

typedef struct {
    uint64_t        magic;
    uint64_t        master_pid;
    uint64_t        generation;  /* the current one */
    uint64_t        started;
    gn_sb_retired_t retired;
    gn_sb_slot_t    slots[GN_SB_SLOTS];
} gn_scoreboard_t;


extern gn_scoreboard_t  *gn_sb;
extern gn_sb_slot_t     *gn_sb_me;      /* a child's own slot */

/* Master only, once, before the first fork (after gn_shm_inherit(): a
 * scoreboard passed by an upgrade becomes the old one, above). */
gn_int_t gn_scoreboard_init(void);

/* Master only: folds the old master's totals into the retired ones once
 * it and its children are gone. GN_OK when there is nothing (left) to
 * fold, GN_AGAIN while the old master or a child of it still runs (a
 * child left by a killed master: for 5 minutes at most, as its pid may
 * have been reused). */
gn_int_t gn_scoreboard_absorb(void);

/* Master: a free slot for a new child, or -1. */
gn_int_t gn_scoreboard_take(void);

/* Master only: the slot's state, in its own record and in the slot. */
void gn_scoreboard_set(gn_int_t slot, gn_sb_state_e state);

/* Master only, once per reaped child (waitpid() returned its pid, so
 * nothing writes the slot any more): adds the slot's counters to the
 * retired totals and marks the slot exited, pid 0. */
void gn_scoreboard_fold(gn_int_t slot);

/* Any process: a consistent copy of the retired totals (out->seq even),
 * with the old master's added while they are not folded in yet, GN_OK;
 * GN_BUSY if the master stayed in the middle of a fold for all of the
 * bounded retries (*out is then the numbers as they were). */
gn_int_t gn_scoreboard_retired(gn_sb_retired_t *out);

#endif /* GN_CORE_SCOREBOARD_H_INCLUDED */
