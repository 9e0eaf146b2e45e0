/*
 * asyncwrite: HSE_IO_ASYNC writes chained through the completion
 * function, HSE_STATUS_PENDING, and HSE_REQ_DONE_WITH_SESSION from the
 * last completion: the pattern of an IIS extension that streams without
 * holding a thread.
 *
 *   GET .../asyncwrite.dll?N   N lines (default 5) "chunk I of N, after
 *                              completion I-1 (B bytes)\n", each written
 *                              when the previous one has completed
 */

#include <windows.h>
#include <httpext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    int    next;
    int    total;
    char   line[128];
} state_t;


BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    pVer->dwExtensionVersion = HSE_VERSION;
    strcpy(pVer->lpszExtensionDesc, "async write ISAPI sample");
    return TRUE;
}


static BOOL
write_next(EXTENSION_CONTROL_BLOCK *pECB, state_t *st, DWORD last)
{
    DWORD  n;

    snprintf(st->line, sizeof(st->line), "chunk %d of %d, after completion "
             "%d (%lu bytes)\n", st->next + 1, st->total, st->next,
             (unsigned long) last);
    st->next++;
    n = (DWORD) strlen(st->line);
    return pECB->WriteClient(pECB->ConnID, st->line, &n, HSE_IO_ASYNC);
}


static VOID WINAPI
completed(EXTENSION_CONTROL_BLOCK *pECB, PVOID pContext, DWORD cbIO,
    DWORD dwError)
{
    state_t  *st = pContext;
    DWORD     status = HSE_STATUS_SUCCESS;

    if (dwError == NO_ERROR && st->next < st->total
        && write_next(pECB, st, cbIO))
    {
        return;
    }

    free(st);
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                &status, NULL, NULL);
}


DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    state_t  *st = calloc(1, sizeof(state_t));

    if (st == NULL) {
        return HSE_STATUS_ERROR;
    }
    st->total = atoi(pECB->lpszQueryString);
    if (st->total <= 0 || st->total > 100000) {
        st->total = 5;
    }

    if (!pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_IO_COMPLETION,
                                     (LPVOID) completed, NULL,
                                     (LPDWORD) st)
        || !pECB->ServerSupportFunction(pECB->ConnID,
                                        HSE_REQ_SEND_RESPONSE_HEADER, NULL,
                                        NULL, (LPDWORD)
                                        "Content-Type: text/plain\r\n\r\n")
        || !write_next(pECB, st, 0))
    {
        free(st);
        return HSE_STATUS_ERROR;
    }

    return HSE_STATUS_PENDING;
}
