/* An ISAPI extension whose GetExtensionVersion refuses to load: the
 * configuration that names it must fail with the directive's file:line. */

#include <windows.h>
#include <httpext.h>

BOOL WINAPI
GetExtensionVersion(HSE_VERSION_INFO *pVer)
{
    (void) pVer;
    return FALSE;
}

DWORD WINAPI
HttpExtensionProc(EXTENSION_CONTROL_BLOCK *pECB)
{
    (void) pECB;
    return HSE_STATUS_ERROR;
}
