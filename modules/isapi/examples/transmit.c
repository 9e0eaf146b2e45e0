/*
 * transmit: HSE_REQ_TRANSMIT_FILE, asynchronous, with the status and
 * header lines (HSE_IO_SEND_HEADERS), the file, and a tail; the file
 * found with HSE_REQ_MAP_URL_TO_PATH.
 *
 *   GET .../transmit.dll?/URL   the file URL names under the root,
 *                               then "\n-- end of file --\n"
 */

#include <windows.h>
#include <httpext.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char  tail[] = "\n-- end of file --\n";


BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    pVer->dwExtensionVersion = HSE_VERSION;
    strcpy(pVer->lpszExtensionDesc, "transmit file ISAPI sample");
    return TRUE;
}


static VOID WINAPI
sent(EXTENSION_CONTROL_BLOCK *pECB, PVOID pContext, DWORD cbIO,
    DWORD dwError)
{
    (void) cbIO;
    (void) dwError;
    close((int) (intptr_t) pContext);
    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_DONE_WITH_SESSION,
                                NULL, NULL, NULL);
}


DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    HSE_TF_INFO  tf;
    char         path[MAX_PATH];
    DWORD        n = sizeof(path);
    int          fd;

    if (strlen(pECB->lpszQueryString) >= sizeof(path)) {
        return HSE_STATUS_ERROR;
    }
    strcpy(path, pECB->lpszQueryString);
    if (!pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_MAP_URL_TO_PATH,
                                     path, &n, NULL))
    {
        return HSE_STATUS_ERROR;
    }

    fd = open(path, O_RDONLY);
    if (fd == -1) {
        pECB->ServerSupportFunction(pECB->ConnID,
                                    HSE_REQ_SEND_RESPONSE_HEADER,
                                    "404 Not Found", NULL, (LPDWORD)
                                    "Content-Type: text/plain\r\n\r\n"
                                    "no such file\n");
        return HSE_STATUS_SUCCESS;
    }

    memset(&tf, 0, sizeof(tf));
    tf.pfnHseIO = sent;
    tf.pContext = (PVOID) (intptr_t) fd;
    tf.hFile = (HANDLE) (intptr_t) fd;
    tf.pszStatusCode = "200 OK";
    tf.pHead = "Content-Type: text/plain\r\nX-Transmit: 1\r\n\r\n";
    tf.HeadLength = (DWORD) strlen(tf.pHead);
    tf.pTail = tail;
    tf.TailLength = (DWORD) strlen(tail);
    tf.dwFlags = HSE_IO_ASYNC | HSE_IO_SEND_HEADERS;

    if (!pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_TRANSMIT_FILE,
                                     &tf, NULL, NULL))
    {
        close(fd);
        return HSE_STATUS_ERROR;
    }

    return HSE_STATUS_PENDING;
}
