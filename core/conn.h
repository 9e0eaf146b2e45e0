/*
 * Client connections of a child: accept, the per-connection arena, the
 * read buffer, readiness, timeouts, and an I/O vtable (plain sockets
 * here; TLS plugs in its own). The transport knows no protocol: a
 * listener carries its protocol's descriptor (gn_conn_proto_t, set by
 * the protocol at child start) and the layer between the socket and the
 * protocol, if any (gn_conn_layer_t: TLS); a connection carries its
 * protocol's handler, close callback and state (handler, on_close,
 * data), and the layer's state (tls).
 */

#ifndef GN_CORE_CONN_H_INCLUDED
#define GN_CORE_CONN_H_INCLUDED

#include "gn_config.h"

#include <netinet/in.h>
#include <arpa/inet.h>

#include "event.h"
#include "timer.h"
#include "pool.h"
#include "cycle.h"
#include "sendq.h"


typedef struct gn_conn_s          gn_conn_t;

typedef void (*gn_conn_handler_pt)(gn_conn_t *c);

/* recv/writev/sendfile return bytes, 0 (recv: EOF), GN_AGAIN or GN_ERROR
 * (errno kept for the log). */
typedef struct {
    ssize_t  (*recv)(gn_conn_t *c, u_char *buf, size_t len);
    ssize_t  (*writev)(gn_conn_t *c, struct iovec *iov, int n, int more);
    ssize_t  (*sendfile)(gn_conn_t *c, int fd, off_t *off, size_t len);
} gn_conn_ops_t;

/*
 * What a protocol gives the transport, through its listeners
 * (gn_listen_t.proto). Called in the child, on the connection's events.
 *
 * init_conn: a new connection is the protocol's (on a TLS listener once
 * the handshake is done, c->state still GN_CONN_HANDSHAKE and the
 * handshake's timer running). It sets c->handler, which conn.c calls on
 * every event from then on, and may set c->data and c->on_close.
 *
 * TLS listeners only:
 * tls_server: the server block for the name the client sent by SNI, or
 * NULL for the listener's default (its credentials and priorities are
 * used for the rest of the handshake);
 * handshake_timeout: how long a handshake may take from now (what is
 * left of the protocol's limit since the accept: a PROXY protocol header
 * takes from it too);
 * tls_rejected: a plain-text request came to the TLS port and was
 * answered 400 with a response of which `sent` bytes went out, `head` of
 * them its head; data/len are the bytes the client sent. The connection
 * closes after it.
 *
 * alpn: the protocols ALPN offers for server block sc (*protos, the
 * count returned; the first preferred), asked as the ClientHello
 * arrives, before and after SNI chose the block;
 *
 * log_server: the server block whose error_log c's messages go to (its
 * request's, else its listener's default);
 * busy: what a client is sent, as plain bytes, when every child is at
 * max_connections: it is accepted, answered and closed (HTTP: a 503).
 */
typedef struct gn_conn_proto_s {
    void            (*init_conn)(gn_conn_t *c);
    gn_srv_conf_t  *(*tls_server)(gn_conn_t *c, const u_char *name,
                                  size_t len);
    gn_msec_t       (*handshake_timeout)(gn_conn_t *c);
    void            (*tls_rejected)(gn_conn_t *c, const u_char *data,
                                    size_t len, size_t sent, size_t head);
    gn_uint_t       (*alpn)(gn_conn_t *c, gn_srv_conf_t *sc,
                            const gn_str_t **protos);
    gn_srv_conf_t  *(*log_server)(gn_conn_t *c);
    gn_str_t        busy;
} gn_conn_proto_t;

/*
 * A layer between the socket and the protocol (TLS; tls.c's
 * gn_tls_layer), carried by a listener (gn_listen_t.layer; NULL: the
 * protocol reads the socket itself). The layer keeps its state in c->tls
 * and may replace c->ops. conn.c calls:
 *
 * start: for a new connection, instead of the protocol's init_conn,
 * which the layer calls once the connection is ready (TLS: after the
 * handshake), or it closes the connection;
 * shutdown: closing, lingering: the layer's last record out (TLS: the
 * alert of the error that ended it, or close_notify), then its state
 * freed (c->tls NULL) and the socket left to plain reads; GN_AGAIN: the
 * socket is full, called again when it is writable;
 * close: closing at once: its state freed after a best effort at its
 * last record.
 *
 * shutdown and close are called only while c->tls is set.
 */
typedef struct gn_conn_layer_s {
    void            (*start)(gn_conn_t *c);
    gn_int_t        (*shutdown)(gn_conn_t *c);
    void            (*close)(gn_conn_t *c);
} gn_conn_layer_t;

/* What the connection is doing, for the status page, the drain
 * (KEEPALIVE: idle, may be closed) and lingering (conn.c's own): the
 * protocol keeps state and state_since up to date. */
typedef enum {
    GN_CONN_READING = 0,       /* waiting for (the rest of) a head */
    GN_CONN_HANDSHAKE,         /* TLS handshake in progress */
    GN_CONN_WRITING,           /* sending a response */
    GN_CONN_KEEPALIVE,         /* idle between requests */
    GN_CONN_DISCARDING,        /* reading and dropping a request body */
    GN_CONN_BODY,              /* reading a body for a module */
    GN_CONN_PENDING,           /* a module handler has not finished */
    GN_CONN_LINGERING,         /* closing: discarding input a while */
    GN_CONN_TUNNEL             /* bytes relayed both ways (WebSocket) */
} gn_conn_state_e;

/* What a PROXY protocol header said (proxy_protocol.h), when it named
 * an address. */
typedef struct {
    struct sockaddr_storage  src;          /* the client */
    struct sockaddr_storage  dst;          /* what it connected to */
    char                     src_text[INET6_ADDRSTRLEN];
    size_t                   src_len;
} gn_conn_proxy_t;

struct gn_conn_s {
    gn_io_t                  io;           /* first: events find us */
    gn_timer_t               timer;
    gn_pool_t               *pool;         /* reset between requests */
    gn_listen_t             *listen;
    const gn_conn_ops_t     *ops;
    void                    *tls;          /* the layer's (gn_tls_conn_t),
                                              or NULL */
    gn_log_t                 log;

    struct sockaddr_storage  peer;
    socklen_t                peerlen;
    char                     addr_text[INET6_ADDRSTRLEN];
    size_t                   addr_len;
    gn_conn_proxy_t         *proxy;        /* malloc()ed, or NULL */
    const char              *log_client;   /* the error log's "client:"
                                              (realip.h), or NULL for
                                              addr_text; in c->pool or
                                              c->proxy */
    gn_msec_t                accepted;     /* gn_current_msec then */

    /* the protocol's: called on every event (but while lingering), and
     * once as the connection closes (gn_conn_close), with its state;
     * on_drain, if set, when the child starts to drain and as it goes on
     * (gn_conn_drain), instead of the closing of an idle connection */
    gn_conn_handler_pt       handler;
    gn_conn_handler_pt       on_close;
    gn_conn_handler_pt       on_drain;
    void                    *data;

    gn_sendq_t               sq;           /* plain writes (sendq.h) */

    u_char                  *buf;          /* read buffer, or NULL idle */
    size_t                   buf_size;
    size_t                   buf_len;      /* bytes in buf */

    gn_conn_state_e          state;
    gn_msec_t                state_since;

    unsigned                 read_ready:1;
    unsigned                 write_ready:1;
    unsigned                 eof:1;
    unsigned                 close:1;
    unsigned                 linger:1;
    unsigned                 hup:1;        /* peer closed or error */
    unsigned                 nodelay:1;    /* TCP_NODELAY is set */
    unsigned                 linger_close:1;  /* gn_conn_close lingers */
    unsigned                 read_on_write:1; /* a read waits for OUT */
    unsigned                 stopping:1;   /* closed as the server stops
                                              (gn_conn_close_all) */

    gn_conn_t               *prev;         /* open connections */
    gn_conn_t               *next;         /* (or the free list) */
};


/* While a child drains (reload, graceful stop), an idle keep-alive
 * connection stays open this long so that a request already on its way
 * is answered (with "Connection: close") instead of meeting a closed
 * socket. */
#define GN_CONN_DRAIN_GRACE  1000

extern gn_uint_t  gn_conn_count;          /* open in this child */
extern gn_uint_t  gn_conn_draining;       /* the child stops soon */

/* Child only: start accepting on the cycle's listeners. */
gn_int_t gn_conn_listen_start(gn_cycle_t *cycle, gn_uint_t max_conns);

/* Child only: stop accepting (drain) and close our copies of the
 * listening sockets. */
void gn_conn_listen_stop(gn_cycle_t *cycle);

/* A new connection, accepted (and past its PROXY protocol header, if
 * its listener wants one): the listener's layer starts, or its
 * protocol's init_conn. */
void gn_conn_start(gn_conn_t *c);

/* Closes c: first c->on_close, if set, once (the protocol finishes its
 * business with the connection: logs a request cut short, frees what it
 * holds); then at once; or, with c->linger_close set (the peer may still
 * be sending: pipelined requests past the last response, a body not read,
 * an alert just sent), lingering: everything the connection holds is
 * released but its socket, whose write side is shut (after TLS's last
 * record) and whose input is read and dropped until the peer closes, for
 * GN_LINGER_MSEC after the last bytes and GN_LINGER_MAX_MSEC at most.
 * Closing with unread input would make the kernel send a reset, which
 * destroys at the client what it has not read yet. Either way the
 * caller must not touch c again. */
#define GN_LINGER_MSEC      2000
#define GN_LINGER_MAX_MSEC  10000

void gn_conn_close(gn_conn_t *c);

/* Drain: close idle connections now or soon, see conn.c. Returns the
 * number of connections still open. */
gn_uint_t gn_conn_drain(gn_msec_t idle_grace);

/* Fast stop: close everything. */
void gn_conn_close_all(void);

/* Pools: a free list, so an idle connection holds none. get returns
 * c->pool (taken from the list or created) or NULL (logged). */
gn_pool_t *gn_conn_pool_get(gn_conn_t *c);
void gn_conn_pool_put(gn_conn_t *c);

/* Read buffers of `size` bytes (the protocol's choice; the same for
 * every connection of a cycle, or the free list is not used): a free
 * list, so an idle connection holds none. get returns c->buf (the one it
 * has, whatever its size, or a new empty one) or NULL (logged). */
u_char *gn_conn_buf_get(gn_conn_t *c, size_t size);
void gn_conn_buf_put(gn_conn_t *c);

/* Sets TCP_NODELAY once: before a response that stays on a kept-alive or
 * streamed connection (see gn_conn_accept_one for why not at accept). */
void gn_conn_nodelay(gn_conn_t *c);

#endif /* GN_CORE_CONN_H_INCLUDED */
