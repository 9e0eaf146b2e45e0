/*
 * TLS to upstreams (tls_client.h).
 */

#include "gn_config.h"

#include <sys/socket.h>
#include <gnutls/x509.h>

#include "tls_client.h"


/* GnuTLS may say GNUTLS_E_AGAIN after it handled a record (a TLS 1.3
 * session ticket) without having met an empty socket: under
 * edge-triggered events no event would come for what is left. So the
 * session reads through gn_tls_client_pull, which notes when recv()
 * met EAGAIN, and an AGAIN is taken for one only then (at most
 * GN_TLS_CLIENT_SPINS calls without it, as tls.c bounds it). */
#define GN_TLS_CLIENT_SPINS  64

typedef struct {
    int         fd;
    unsigned    eagain:1;
} gn_tls_client_io_t;


static ssize_t
gn_tls_client_pull(gnutls_transport_ptr_t ptr, void *buf, size_t len)
{
    gn_tls_client_io_t  *io = ptr;
    ssize_t              n;

    n = recv(io->fd, buf, len, 0);
    io->eagain = n == -1 && (errno == EAGAIN || errno == EWOULDBLOCK);
    return n;
}


static ssize_t
gn_tls_client_push(gnutls_transport_ptr_t ptr, const void *buf, size_t len)
{
    gn_tls_client_io_t  *io = ptr;

    return send(io->fd, buf, len, MSG_NOSIGNAL);
}


/* rc is GNUTLS_E_AGAIN (or a non-fatal report) that is not real: go on. */
static gn_uint_t
gn_tls_client_again(gnutls_session_t s, int rc, gn_uint_t *spins)
{
    gn_tls_client_io_t  *io = gnutls_transport_get_ptr(s);

    if (rc == GNUTLS_E_INTERRUPTED) {
        return 1;
    }
    if (rc != GNUTLS_E_AGAIN) {
        return rc < 0 && !gnutls_error_is_fatal(rc);
    }
    if (gnutls_record_get_direction(s) == 1 || io->eagain) {
        return 0;                     /* the socket is full, or empty */
    }
    return ++*spins < GN_TLS_CLIENT_SPINS;
}


const char *
gn_tls_client_init(gn_tls_client_t *tc, const char *trusted)
{
    int  rc;

    if (gnutls_certificate_allocate_credentials(&tc->cred) < 0) {
        return "out of memory";
    }

    if (trusted != NULL) {
        rc = gnutls_certificate_set_x509_trust_file(tc->cred, trusted,
                                                    GNUTLS_X509_FMT_PEM);
        if (rc < 0) {
            return gnutls_strerror(rc);
        }
        if (rc == 0) {
            return "no certificate in it";
        }
    }

    return NULL;
}


void
gn_tls_client_done(void *data)
{
    gn_tls_client_t  *tc = data;

    if (tc->cred != NULL) {
        gnutls_certificate_free_credentials(tc->cred);
        tc->cred = NULL;
    }
}


gnutls_session_t
gn_tls_client_new(gn_tls_client_t *tc, int fd)
{
    gnutls_session_t     s;
    gn_tls_client_io_t  *io;

    if (gnutls_init(&s, GNUTLS_CLIENT | GNUTLS_NONBLOCK) < 0) {
        return NULL;
    }

    /* no SNI for an address (RFC 6066 3): it is still verified */
    if (gnutls_set_default_priority(s) < 0
        || gnutls_credentials_set(s, GNUTLS_CRD_CERTIFICATE, tc->cred) < 0
        || (tc->name.len > 0 && !tc->is_addr
            && gnutls_server_name_set(s, GNUTLS_NAME_DNS, tc->name.data,
                                      tc->name.len) < 0))
    {
        gnutls_deinit(s);
        return NULL;
    }

    if (tc->verify) {
        gnutls_session_set_verify_cert(s, tc->cname, 0);
    }

    if (tc->reuse && tc->session.data != NULL) {
        (void) gnutls_session_set_data(s, tc->session.data,
                                       tc->session.size);
    }

    io = calloc(1, sizeof(gn_tls_client_io_t));
    if (io == NULL) {
        gnutls_deinit(s);
        return NULL;
    }
    io->fd = fd;
    gnutls_transport_set_ptr(s, io);
    gnutls_transport_set_pull_function(s, gn_tls_client_pull);
    gnutls_transport_set_push_function(s, gn_tls_client_push);
    return s;
}


gn_int_t
gn_tls_client_handshake(gn_tls_client_t *tc, gnutls_session_t s,
    const char **err)
{
    gn_uint_t  spins = 0;
    int        rc;

    do {
        rc = gnutls_handshake(s);
    } while (rc != GNUTLS_E_SUCCESS && gn_tls_client_again(s, rc, &spins));

    if (rc == GNUTLS_E_AGAIN) {
        return GN_AGAIN;
    }

    if (rc < 0) {
        *err = rc == GNUTLS_E_CERTIFICATE_VERIFICATION_ERROR
               ? "the upstream's certificate did not verify"
               : gnutls_strerror(rc);
        return GN_ERROR;
    }

    gn_tls_client_save(tc, s);
    return GN_OK;
}


void
gn_tls_client_save(gn_tls_client_t *tc, gnutls_session_t s)
{
    gnutls_datum_t  d;

    if (tc->reuse && gnutls_session_is_resumed(s) == 0
        && gnutls_session_get_data2(s, &d) == 0)
    {
        gnutls_free(tc->session.data);
        tc->session = d;             /* the child's copy of the config */
    }
}


ssize_t
gn_tls_client_send(gnutls_session_t s, const u_char *p, size_t n)
{
    ssize_t    rc;
    gn_uint_t  spins = 0;

    do {
        rc = gnutls_record_send(s, p, n);
    } while (rc < 0 && rc != GNUTLS_E_AGAIN
             && gn_tls_client_again(s, (int) rc, &spins));

    if (rc == GNUTLS_E_AGAIN) {
        return GN_AGAIN;
    }
    return rc < 0 ? GN_ERROR : rc;
}


ssize_t
gn_tls_client_recv(gnutls_session_t s, u_char *p, size_t n)
{
    ssize_t    rc;
    gn_uint_t  spins = 0;

    do {
        rc = gnutls_record_recv(s, p, n);
    } while (rc < 0 && gn_tls_client_again(s, (int) rc, &spins));

    if (rc == GNUTLS_E_AGAIN) {
        return GN_AGAIN;
    }
    if (rc == GNUTLS_E_PREMATURE_TERMINATION) {
        return 0;                    /* a close without close_notify */
    }
    return rc < 0 ? GN_ERROR : rc;
}


void
gn_tls_client_free(gnutls_session_t s)
{
    gn_tls_client_io_t  *io = gnutls_transport_get_ptr(s);

    (void) gnutls_bye(s, GNUTLS_SHUT_WR);   /* non-blocking: one try */
    gnutls_deinit(s);
    free(io);
}
