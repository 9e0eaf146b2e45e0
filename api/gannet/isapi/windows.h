/*
 * <windows.h> for ISAPI extensions built on Unix against Gannet: only the
 * types, macros and functions that <httpext.h> and an ordinary extension
 * use, with the sizes they have on Windows (DWORD 32 bits, BOOL an int),
 * so a source written for IIS compiles unchanged with
 *
 *     cc -shared -fPIC -I$(pkg-config --variable=includedir gannet)/gannet/isapi ...
 *
 * Written from Microsoft's public documentation of the Windows data types
 * and of the ISAPI extension interface.
 *
 * GetLastError() and SetLastError() are errno: per thread, as on Windows,
 * and shared by the extension and the host (mod_isapi sets it, to the
 * Windows error code, as the last thing before a callback returns
 * FALSE). A HANDLE given to HSE_REQ_TRANSMIT_FILE is a file descriptor:
 * (HANDLE) (intptr_t) fd.
 */

#ifndef GN_ISAPI_WINDOWS_H_INCLUDED
#define GN_ISAPI_WINDOWS_H_INCLUDED

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define WINAPI
#define CALLBACK
#define APIENTRY
#define WINAPIV
#ifndef IN
#define IN
#endif
#ifndef OUT
#define OUT
#endif
#ifndef OPTIONAL
#define OPTIONAL
#endif

typedef uint32_t        DWORD;
typedef int             BOOL;
typedef unsigned char   BYTE;
typedef uint16_t        WORD;
typedef char            CHAR;
typedef unsigned char   UCHAR;
typedef int32_t         LONG;
typedef uint32_t        ULONG;
typedef int             INT;
typedef unsigned int    UINT;
typedef int32_t         HRESULT;
typedef uint64_t        ULONGLONG;
typedef int64_t         LONGLONG;
typedef void            VOID;
typedef void           *PVOID;
typedef void           *LPVOID;
typedef const void     *LPCVOID;
typedef void           *HANDLE;
typedef HANDLE          HMODULE;
typedef HANDLE          HINSTANCE;
typedef char           *LPSTR;
typedef char           *PSTR;
typedef const char     *LPCSTR;
typedef const char     *PCSTR;
typedef DWORD          *LPDWORD;
typedef DWORD          *PDWORD;
typedef BYTE           *LPBYTE;
typedef BYTE           *PBYTE;
typedef BOOL           *LPBOOL;
typedef BOOL           *PBOOL;

#ifndef TRUE
#define TRUE   1
#endif
#ifndef FALSE
#define FALSE  0
#endif

#define MAX_PATH                     260
#define INVALID_HANDLE_VALUE         ((HANDLE) (intptr_t) -1)

#define MAKEWORD(lo, hi)   ((WORD) (((BYTE) (lo)) | ((WORD) ((BYTE) (hi))) << 8))
#define MAKELONG(lo, hi)   ((DWORD) (((WORD) (lo)) | ((DWORD) ((WORD) (hi))) << 16))
#define LOWORD(l)          ((WORD) ((DWORD) (l) & 0xffff))
#define HIWORD(l)          ((WORD) ((DWORD) (l) >> 16))

/* The Windows error codes an ISAPI extension meets. */
#define ERROR_SUCCESS                0
#define NO_ERROR                     0
#define ERROR_INVALID_FUNCTION       1
#define ERROR_FILE_NOT_FOUND         2
#define ERROR_ACCESS_DENIED          5
#define ERROR_INVALID_HANDLE         6
#define ERROR_NOT_ENOUGH_MEMORY      8
#define ERROR_NOT_SUPPORTED          50
#define ERROR_NETNAME_DELETED        64
#define ERROR_INVALID_PARAMETER      87
#define ERROR_INSUFFICIENT_BUFFER    122
#define ERROR_NO_DATA                232
#define ERROR_MORE_DATA              234
#define ERROR_IO_PENDING             997
#define ERROR_INVALID_INDEX          1413

static inline DWORD
GetLastError(void)
{
    return (DWORD) errno;
}

static inline void
SetLastError(DWORD err)
{
    errno = (int) err;
}

#ifdef __cplusplus
}
#endif

#endif /* GN_ISAPI_WINDOWS_H_INCLUDED */
