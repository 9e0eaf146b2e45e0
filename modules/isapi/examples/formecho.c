/*
 * formecho: a form POST echoed back, read as IIS hands it over: the
 * first cbAvailable bytes in lpbData, the rest with ReadClient until
 * cbTotalBytes have come.
 *
 *   POST .../formecho.dll   "total=N available=A type=T\n", then the body
 */

#include <windows.h>
#include <httpext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>


BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    pVer->dwExtensionVersion = HSE_VERSION;
    strcpy(pVer->lpszExtensionDesc, "form echo ISAPI sample");
    return TRUE;
}


DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    char   head[256], *body;
    DWORD  n, got, want;

    body = malloc(pECB->cbTotalBytes + 1);
    if (body == NULL) {
        return HSE_STATUS_ERROR;
    }

    memcpy(body, pECB->lpbData, pECB->cbAvailable);
    for (got = pECB->cbAvailable; got < pECB->cbTotalBytes; got += n) {
        n = pECB->cbTotalBytes - got;
        if (!pECB->ReadClient(pECB->ConnID, body + got, &n) || n == 0) {
            free(body);
            return HSE_STATUS_ERROR;
        }
    }

    pECB->ServerSupportFunction(pECB->ConnID, HSE_REQ_SEND_RESPONSE_HEADER,
                                "200 OK", NULL,
                                (LPDWORD) "Content-Type: text/plain\r\n\r\n");
    snprintf(head, sizeof(head), "total=%lu available=%lu type=%s\n",
             (unsigned long) pECB->cbTotalBytes,
             (unsigned long) pECB->cbAvailable, pECB->lpszContentType);
    n = (DWORD) strlen(head);
    pECB->WriteClient(pECB->ConnID, head, &n, HSE_IO_SYNC);
    want = got;
    pECB->WriteClient(pECB->ConnID, body, &want, HSE_IO_SYNC);
    free(body);

    return HSE_STATUS_SUCCESS;
}
