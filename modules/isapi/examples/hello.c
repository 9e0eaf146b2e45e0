/*
 * hello: an ISAPI extension as written for IIS (nothing Gannet-specific):
 * the server variables it is given, and a response header sent with
 * HSE_REQ_SEND_RESPONSE_HEADER_EX.
 *
 *   GET .../hello.dll?x=1   "Hello from ISAPI" and, one a line,
 *                           NAME=VALUE of the variables below; then
 *                           "small buffer: ERROR_INSUFFICIENT_BUFFER
 *                           need=N" (a 4-byte buffer asked for URL)
 */

#include <windows.h>
#include <httpext.h>
#include <stdio.h>
#include <string.h>

static const char *names[] = {
    "REQUEST_METHOD", "QUERY_STRING", "URL", "PATH_INFO", "PATH_TRANSLATED",
    "SERVER_NAME", "SERVER_PORT", "SERVER_PROTOCOL", "REMOTE_ADDR", "HTTPS",
    "SERVER_PORT_SECURE", "HTTP_USER_AGENT", "HTTP_X_TEST", "ALL_HTTP",
    NULL
};


BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    pVer->dwExtensionVersion = MAKELONG(HSE_VERSION_MINOR, HSE_VERSION_MAJOR);
    strncpy(pVer->lpszExtensionDesc, "hello ISAPI sample",
            HSE_MAX_EXT_DLL_NAME_LEN - 1);
    return TRUE;
}


static void
put(EXTENSION_CONTROL_BLOCK *pECB, const char *s)
{
    DWORD  n = (DWORD) strlen(s);

    pECB->WriteClient(pECB->ConnID, (LPVOID) s, &n, HSE_IO_SYNC);
}


DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    HSE_SEND_HEADER_EX_INFO  hi;
    char                     buf[4096], line[4200];
    DWORD                    n;
    int                      i;

    memset(&hi, 0, sizeof(hi));
    hi.pszStatus = "200 OK";
    hi.pszHeader = "Content-Type: text/plain\r\nX-Isapi: hello\r\n\r\n";
    hi.cchStatus = (DWORD) strlen(hi.pszStatus);
    hi.cchHeader = (DWORD) strlen(hi.pszHeader);
    hi.fKeepConn = TRUE;
    if (!pECB->ServerSupportFunction(pECB->ConnID,
                                     HSE_REQ_SEND_RESPONSE_HEADER_EX, &hi,
                                     NULL, NULL))
    {
        return HSE_STATUS_ERROR;
    }

    put(pECB, "Hello from ISAPI\n");
    snprintf(line, sizeof(line), "method=%s query=%s path_info=%s\n",
             pECB->lpszMethod, pECB->lpszQueryString, pECB->lpszPathInfo);
    put(pECB, line);

    for (i = 0; names[i] != NULL; i++) {
        n = sizeof(buf);
        if (pECB->GetServerVariable(pECB->ConnID, (LPSTR) names[i], buf, &n)) {
            snprintf(line, sizeof(line), "%s=%s\n", names[i], buf);
        } else {
            snprintf(line, sizeof(line), "%s: error %lu\n", names[i],
                     (unsigned long) GetLastError());
        }
        put(pECB, line);
    }

    n = 4;
    if (!pECB->GetServerVariable(pECB->ConnID, "URL", buf, &n)
        && GetLastError() == ERROR_INSUFFICIENT_BUFFER)
    {
        snprintf(line, sizeof(line), "small buffer: "
                 "ERROR_INSUFFICIENT_BUFFER need=%lu\n", (unsigned long) n);
        put(pECB, line);
    }

    return HSE_STATUS_SUCCESS;
}


BOOL WINAPI
TerminateExtension(DWORD dwFlags)
{
    (void) dwFlags;
    return TRUE;
}
