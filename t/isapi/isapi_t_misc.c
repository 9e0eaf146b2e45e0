/*
 * The test extension of t/integ/111-isapi.t: one behaviour per query.
 *
 *   ?badargs     every callback with bad arguments (NULL, short buffers,
 *                unknown codes, an unknown variable), each result as
 *                "NAME=ok|fail:ERR" a line
 *   ?error       returns HSE_STATUS_ERROR before any output
 *   ?crash       writes to address 16 (the child dies of SIGSEGV; the
 *                master replaces it)
 *   ?hang        returns HSE_STATUS_PENDING and never finishes
 *   ?redirect    HSE_REQ_SEND_URL_REDIRECT_RESP to /elsewhere
 *   ?readasync   the body read with HSE_REQ_ASYNC_READ_CLIENT, 1000 bytes
 *                a completion, then "async read N bytes in K reads, md5-less
 *                sum S" (sum of the bytes)
 *   ?mapex       HSE_REQ_MAP_URL_TO_PATH_EX of /x/y.txt
 *   ?keepconn    HSE_REQ_IS_KEEP_CONN, HSE_REQ_IS_CONNECTED
 *   ?log         HSE_APPEND_LOG_PARAMETER "isapi-log-mark"
 *   ?donein      HSE_REQ_DONE_WITH_SESSION inside HttpExtensionProc,
 *                then HSE_STATUS_PENDING
 *   ?order       two async writes; the completion order as lines
 *   ?nohead      WriteClient without any header
 *   ?status      "503 Busy" with a body
 *   ?wait=PATH   blocks (sleeps) until the file PATH exists, at most 10 s,
 *                then "waited for PATH, URL=..." (for isapi_threads: it
 *                blocks its thread, not the loop)
 *   ?own=MS      PENDING; a thread of the extension's own, MS ms later,
 *                writes "from its own thread (write ok|failed)\n" and says
 *                DONE_WITH_SESSION (the client may be gone by then)
 *   ?gone        PENDING; 1 MiB async writes, one a completion, until a
 *                completion (or the write after one) reports an error:
 *                "completion error E" is
 *                appended to $GN_ISAPI_TERM_FILE, then DONE_WITH_SESSION
 *   ?pump=N      PENDING; from the first async write's completion, N
 *                synchronous WriteClient calls of 64 KiB ("0123456789"
 *                repeated), then DONE_WITH_SESSION
 */

#include <windows.h>
#include <httpext.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

static int  terminated;

/* volatile: not folded; 16, not 0, so that UBSan's null check (a report,
 * not a crash) does not fire first (as t/modules/mod_t_crash.c) */
static volatile uintptr_t  crash_address = 16;


BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    pVer->dwExtensionVersion = HSE_VERSION;
    strcpy(pVer->lpszExtensionDesc, "test extension");
    return TRUE;
}


/* Each call appends "terminate PID FLAGS" to the file named by the
 * environment's GN_ISAPI_TERM_FILE, when set (the test reads it). */
BOOL WINAPI
TerminateExtension(DWORD dwFlags)
{
    const char  *f = getenv("GN_ISAPI_TERM_FILE");
    FILE        *fp;

    terminated++;
    if (f != NULL && (fp = fopen(f, "a")) != NULL) {
        fprintf(fp, "terminate %ld %lu\n", (long) getpid(),
                (unsigned long) dwFlags);
        fclose(fp);
    }
    return TRUE;
}


static void
put(EXTENSION_CONTROL_BLOCK *pECB, const char *s)
{
    DWORD  n = (DWORD) strlen(s);

    pECB->WriteClient(pECB->ConnID, (LPVOID) s, &n, HSE_IO_SYNC);
}


static void
result(EXTENSION_CONTROL_BLOCK *pECB, const char *name, BOOL ok)
{
    char  line[128];

    if (ok) {
        snprintf(line, sizeof(line), "%s=ok\n", name);
    } else {
        snprintf(line, sizeof(line), "%s=fail:%lu\n", name,
                 (unsigned long) GetLastError());
    }
    put(pECB, line);
}


static void
text_head(EXTENSION_CONTROL_BLOCK *pECB)
{
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_SEND_RESPONSE_HEADER,
                                "200 OK", NULL,
                                (LPDWORD) "Content-Type: text/plain\r\n\r\n");
}


static DWORD
badargs(EXTENSION_CONTROL_BLOCK *pECB)
{
    char   buf[16], line[32];
    DWORD  n;
    BOOL   b;

    text_head(pECB);

    n = sizeof(buf);
    result(pECB, "var_null_name", pECB->GetServerVariable(pECB->ConnID, NULL,
                                                          buf, &n));
    result(pECB, "var_null_size", pECB->GetServerVariable(pECB->ConnID, "URL",
                                                          buf, NULL));
    n = sizeof(buf);
    result(pECB, "var_unknown", pECB->GetServerVariable(pECB->ConnID,
                                                        "NO_SUCH_VAR", buf,
                                                        &n));
    n = sizeof(buf);
    result(pECB, "var_no_header", pECB->GetServerVariable(pECB->ConnID,
                                                          "HTTP_NO_SUCH",
                                                          buf, &n));
    n = 2;
    b = pECB->GetServerVariable(pECB->ConnID, "REQUEST_METHOD", buf, &n);
    result(pECB, "var_short", b);
    snprintf(line, sizeof(line), "need=%lu\n", (unsigned long) n);
    put(pECB, line);
    n = 0;
    result(pECB, "var_null_buffer", pECB->GetServerVariable(pECB->ConnID,
                                                            "URL", NULL, &n));
    result(pECB, "var_bad_conn", pECB->GetServerVariable(NULL, "URL", buf,
                                                         &n));
    n = 5;
    result(pECB, "write_null", pECB->WriteClient(pECB->ConnID, NULL, &n,
                                                 HSE_IO_SYNC));
    result(pECB, "write_null_size", pECB->WriteClient(pECB->ConnID, "x",
                                                      NULL, HSE_IO_SYNC));
    n = 1;
    result(pECB, "write_async_no_completion",
           pECB->WriteClient(pECB->ConnID, "x", &n, HSE_IO_ASYNC));
    n = 4;
    result(pECB, "read_null", pECB->ReadClient(pECB->ConnID, NULL, &n));
    n = sizeof(buf);
    b = pECB->ReadClient(pECB->ConnID, buf, &n);
    result(pECB, "read_no_body", b && n == 0);
    result(pECB, "ssf_unknown", pECB->ServerSupportFunction(pECB->ConnID,
                                                            77777, NULL,
                                                            NULL, NULL));
    result(pECB, "ssf_unsupported",
           pECB->ServerSupportFunction(pECB->ConnID,
                                       HSE_REQ_GET_IMPERSONATION_TOKEN, buf,
                                       NULL, NULL));
    result(pECB, "ssf_header_again",
           pECB->ServerSupportFunction(pECB->ConnID,
                                       HSE_REQ_SEND_RESPONSE_HEADER,
                                       "200 OK", NULL, NULL));
    result(pECB, "ssf_header_ex_null",
           pECB->ServerSupportFunction(pECB->ConnID,
                                       HSE_REQ_SEND_RESPONSE_HEADER_EX, NULL,
                                       NULL, NULL));
    result(pECB, "ssf_redirect_null",
           pECB->ServerSupportFunction(pECB->ConnID,
                                       HSE_REQ_SEND_URL_REDIRECT_RESP, NULL,
                                       NULL, NULL));
    strcpy(buf, "/a/b/c/d.txt");           /* the root does not fit */
    n = sizeof(buf);
    result(pECB, "map_short", pECB->ServerSupportFunction(pECB->ConnID,
                                                          HSE_REQ_MAP_URL_TO_PATH,
                                                          buf, &n, NULL));
    strcpy(buf, "/../etc");
    n = sizeof(buf);
    result(pECB, "map_dotdot", pECB->ServerSupportFunction(pECB->ConnID,
                                                           HSE_REQ_MAP_URL_TO_PATH,
                                                           buf, &n, NULL));
    result(pECB, "tf_null", pECB->ServerSupportFunction(pECB->ConnID,
                                                        HSE_REQ_TRANSMIT_FILE,
                                                        NULL, NULL, NULL));
    result(pECB, "keepconn_null", pECB->ServerSupportFunction(pECB->ConnID,
                                                              HSE_REQ_IS_KEEP_CONN,
                                                              NULL, NULL,
                                                              NULL));
    result(pECB, "ssf_bad_conn", pECB->ServerSupportFunction(NULL,
                                                             HSE_REQ_IS_CONNECTED,
                                                             &b, NULL, NULL));
    put(pECB, "end\n");
    return HSE_STATUS_SUCCESS;
}


typedef struct {
    DWORD  got, reads;
    unsigned long sum;
    char   buf[1000];
} rd_t;


static VOID WINAPI
read_done(EXTENSION_CONTROL_BLOCK *pECB, PVOID pContext, DWORD cbIO,
    DWORD dwError)
{
    rd_t   *rd = pContext;
    DWORD   i, n, flags = HSE_IO_ASYNC;
    char    line[160];

    for (i = 0; i < cbIO; i++) {
        rd->sum += (unsigned char) rd->buf[i];
    }
    rd->got += cbIO;
    rd->reads++;

    if (dwError == NO_ERROR && cbIO > 0 && rd->got < pECB->cbTotalBytes) {
        n = sizeof(rd->buf);
        if (pECB->ServerSupportFunction(pECB->ConnID,
                                        HSE_REQ_ASYNC_READ_CLIENT, rd->buf,
                                        &n, &flags))
        {
            return;
        }
    }

    text_head(pECB);
    snprintf(line, sizeof(line), "async read %lu bytes in %lu reads, sum "
             "%lu\n", (unsigned long) rd->got, (unsigned long) rd->reads,
             rd->sum);
    put(pECB, line);
    free(rd);
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                NULL, NULL, NULL);
}


static DWORD
readasync(EXTENSION_CONTROL_BLOCK *pECB)
{
    rd_t   *rd = calloc(1, sizeof(rd_t));
    DWORD   i, n = sizeof(rd->buf), flags = HSE_IO_ASYNC;

    if (rd == NULL) {
        return HSE_STATUS_ERROR;
    }
    for (i = 0; i < pECB->cbAvailable; i++) {     /* what came with it */
        rd->sum += pECB->lpbData[i];
    }
    rd->got = pECB->cbAvailable;

    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IO_COMPLETION,
                                (LPVOID) read_done, NULL, (LPDWORD) rd);
    if (!pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_ASYNC_READ_CLIENT,
                                     rd->buf, &n, &flags))
    {
        free(rd);
        return HSE_STATUS_ERROR;
    }
    return HSE_STATUS_PENDING;
}


static int  order_n;

static VOID WINAPI
order_done(EXTENSION_CONTROL_BLOCK *pECB, PVOID pContext, DWORD cbIO,
    DWORD dwError)
{
    char   line[64];
    DWORD  n;

    (void) dwError;
    order_n++;
    snprintf(line, sizeof(line), "completion %d: %s (%lu bytes)\n", order_n,
             (char *) pContext, (unsigned long) cbIO);
    n = (DWORD) strlen(line);
    if (order_n == 1) {
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IO_COMPLETION,
                                    (LPVOID) order_done, NULL,
                                    (LPDWORD) "second");
        pECB->WriteClient(pECB->ConnID, line, &n, HSE_IO_ASYNC);
        return;
    }
    pECB->WriteClient(pECB->ConnID, line, &n, HSE_IO_SYNC);
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                NULL, NULL, NULL);
}


static VOID WINAPI
gone_done(EXTENSION_CONTROL_BLOCK *pECB, PVOID pContext, DWORD cbIO,
    DWORD dwError)
{
    static char  block[1 << 20];
    const char  *f = getenv("GN_ISAPI_TERM_FILE");
    FILE        *fp;
    DWORD        n = sizeof(block);

    (void) pContext;
    (void) cbIO;
    if (dwError == NO_ERROR) {
        if (pECB->WriteClient(pECB->ConnID, block, &n, HSE_IO_ASYNC)) {
            return;
        }
        /* the client went between this completion and the next write:
         * the write says so itself */
        dwError = GetLastError();
    }
    if (f != NULL && (fp = fopen(f, "a")) != NULL) {
        fprintf(fp, "completion error %lu\n", (unsigned long) dwError);
        fclose(fp);
    }
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                NULL, NULL, NULL);
}


static VOID WINAPI
pump_done(EXTENSION_CONTROL_BLOCK *pECB, PVOID pContext, DWORD cbIO,
    DWORD dwError)
{
    static char  block[65536];
    int          i, n = (int) (intptr_t) pContext;
    DWORD        len;

    (void) cbIO;
    (void) dwError;
    for (i = 0; i < (int) sizeof(block); i++) {
        block[i] = (char) ('0' + i % 10);
    }
    for (i = 0; i < n; i++) {
        len = sizeof(block);
        if (!pECB->WriteClient(pECB->ConnID, block, &len, HSE_IO_SYNC)) {
            break;
        }
    }
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                NULL, NULL, NULL);
}


static void *
own_thread(void *arg)
{
    EXTENSION_CONTROL_BLOCK  *pECB = arg;
    char                      line[64];
    DWORD                     n;
    BOOL                      ok;

    usleep((useconds_t) atoi(pECB->lpszQueryString + 4) * 1000);
    n = 17;
    ok = pECB->WriteClient(pECB->ConnID, "from its own thre", &n, HSE_IO_SYNC);
    snprintf(line, sizeof(line), "ad (write %s)\n", ok ? "ok" : "failed");
    n = (DWORD) strlen(line);
    pECB->WriteClient(pECB->ConnID, line, &n, HSE_IO_SYNC);
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                NULL, NULL, NULL);
    return NULL;
}


DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    const char          *q = pECB->lpszQueryString;
    HSE_URL_MAPEX_INFO   mi;
    char                 line[512];
    DWORD                n;
    BOOL                 keep = 0, conn = 0;

    if (strncmp(q, "wait=", 5) == 0) {
        char  url[256];
        int   i;

        for (i = 0; i < 1000 && access(q + 5, F_OK) != 0; i++) {
            usleep(10000);
        }
        n = sizeof(url);
        if (!pECB->GetServerVariable(pECB->ConnID, "URL", url, &n)) {
            strcpy(url, "?");
        }
        text_head(pECB);
        snprintf(line, sizeof(line), "waited for %s, URL=%s\n", q + 5, url);
        put(pECB, line);
        return HSE_STATUS_SUCCESS;
    }
    if (strncmp(q, "own=", 4) == 0) {
        pthread_t  tid;

        text_head(pECB);
        if (pthread_create(&tid, NULL, own_thread, pECB) != 0) {
            return HSE_STATUS_ERROR;
        }
        pthread_detach(tid);
        return HSE_STATUS_PENDING;
    }
    if (strcmp(q, "gone") == 0) {
        text_head(pECB);
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IO_COMPLETION,
                                    (LPVOID) gone_done, NULL, NULL);
        n = 6;
        pECB->WriteClient(pECB->ConnID, "start\n", &n, HSE_IO_ASYNC);
        return HSE_STATUS_PENDING;
    }
    if (strncmp(q, "pump=", 5) == 0) {
        text_head(pECB);
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IO_COMPLETION,
                                    (LPVOID) pump_done, NULL,
                                    (LPDWORD) (intptr_t) atoi(q + 5));
        n = 0;
        pECB->WriteClient(pECB->ConnID, "", &n, HSE_IO_ASYNC);
        return HSE_STATUS_PENDING;
    }
    if (strcmp(q, "badargs") == 0) {
        return badargs(pECB);
    }
    if (strcmp(q, "error") == 0) {
        return HSE_STATUS_ERROR;
    }
    if (strcmp(q, "crash") == 0) {
        struct rlimit  rl = { 0, 0 };

        (void) setrlimit(RLIMIT_CORE, &rl);     /* no core file */
        signal(SIGSEGV, SIG_DFL);               /* not a sanitizer's */
        *(volatile int *) crash_address = 1;
        return HSE_STATUS_SUCCESS;
    }
    if (strcmp(q, "hang") == 0) {
        text_head(pECB);
        put(pECB, "hanging\n");
        return HSE_STATUS_PENDING;
    }
    if (strcmp(q, "redirect") == 0) {
        pECB->ServerSupportFunction(pECB->ConnID,
                                    HSE_REQ_SEND_URL_REDIRECT_RESP,
                                    "/elsewhere", NULL, NULL);
        return HSE_STATUS_SUCCESS;
    }
    if (strcmp(q, "readasync") == 0) {
        return readasync(pECB);
    }
    if (strcmp(q, "mapex") == 0) {
        memset(&mi, 0, sizeof(mi));
        text_head(pECB);
        if (pECB->ServerSupportFunction(pECB->ConnID,
                                        HSE_REQ_MAP_URL_TO_PATH_EX,
                                        "/x/y.txt", NULL, (LPDWORD) &mi))
        {
            snprintf(line, sizeof(line), "path=%s matching_path=%lu "
                     "flags=%lu\n", mi.lpszPath,
                     (unsigned long) mi.cchMatchingPath,
                     (unsigned long) mi.dwFlags);
            put(pECB, line);
        }
        return HSE_STATUS_SUCCESS;
    }
    if (strcmp(q, "keepconn") == 0) {
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IS_KEEP_CONN,
                                    &keep, NULL, NULL);
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IS_CONNECTED,
                                    &conn, NULL, NULL);
        text_head(pECB);
        snprintf(line, sizeof(line), "keep=%d connected=%d\n", keep, conn);
        put(pECB, line);
        return HSE_STATUS_SUCCESS_AND_KEEP_CONN;
    }
    if (strcmp(q, "log") == 0) {
        pECB->ServerSupportFunction(pECB->ConnID, HSE_APPEND_LOG_PARAMETER,
                                    "isapi-log-mark", NULL, NULL);
        text_head(pECB);
        put(pECB, "logged\n");
        return HSE_STATUS_SUCCESS;
    }
    if (strcmp(q, "donein") == 0) {
        text_head(pECB);
        put(pECB, "done inside\n");
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                    NULL, NULL, NULL);
        return HSE_STATUS_PENDING;
    }
    if (strcmp(q, "order") == 0) {
        order_n = 0;
        text_head(pECB);
        pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IO_COMPLETION,
                                    (LPVOID) order_done, NULL,
                                    (LPDWORD) "first");
        n = 6;
        pECB->WriteClient(pECB->ConnID, "start\n", &n, HSE_IO_ASYNC);
        return HSE_STATUS_PENDING;
    }
    if (strcmp(q, "nohead") == 0) {
        put(pECB, "no header\n");
        return HSE_STATUS_SUCCESS;
    }
    if (strcmp(q, "status") == 0) {
        pECB->ServerSupportFunction(pECB->ConnID,
                                    HSE_REQ_SEND_RESPONSE_HEADER,
                                    "503 Busy", NULL, (LPDWORD)
                                    "Content-Type: text/plain\r\n"
                                    "Retry-After: 7\r\n\r\nbusy now\n");
        return HSE_STATUS_SUCCESS;
    }

    text_head(pECB);
    snprintf(line, sizeof(line), "terminated=%d\n", terminated);
    put(pECB, line);
    return HSE_STATUS_SUCCESS;
}
