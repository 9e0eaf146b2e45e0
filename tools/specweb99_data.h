/*
 * The SPECweb99 workload data, as pure functions: the file set's
 * directory count, file sizes and contents, and the User.Personality and
 * Custom.Ads records.  No I/O, no allocation, no logging: the generator
 * (tools/specweb99.c) writes what these functions produce, and the load
 * generator (bench/specweb99/) computes with the same functions what a
 * response must contain, without reading the disk.
 *
 * Every function may be called from any thread or process; they depend
 * only on their arguments.  The byte layouts are in doc/specweb99.md.
 */

#ifndef GN_TOOLS_SPECWEB99_DATA_H_INCLUDED
#define GN_TOOLS_SPECWEB99_DATA_H_INCLUDED


#include <stddef.h>
#include <stdint.h>


#define GN_SPECWEB99_DEFAULT_SEED  99

#define GN_SPECWEB99_CLASSES       4
#define GN_SPECWEB99_FILES         9      /* per class: MAX_FILE 8 */
#define GN_SPECWEB99_DIR_FILES     36

#define GN_SPECWEB99_LINE          64     /* 63 characters and '\n' */
#define GN_SPECWEB99_TAG_EVERY     4096   /* ad tag spacing, class 1, 2 */
#define GN_SPECWEB99_TAG_LEN       62
#define GN_SPECWEB99_TAG_DIR       34     /* offsets of NNNNN, X, Y */
#define GN_SPECWEB99_TAG_CLASS     45
#define GN_SPECWEB99_TAG_NUM       47

#define GN_SPECWEB99_USER_REC      15     /* "%5d %8X\n" */
#define GN_SPECWEB99_MAX_USERS     100000 /* the 5-digit id field */
#define GN_SPECWEB99_USERS_PER_CONN 10

#define GN_SPECWEB99_ADS           360
#define GN_SPECWEB99_AD_REC        39     /* "%5d %8X %8X %3d %10d\n" */
#define GN_SPECWEB99_AD_CATCHALL   40     /* every 40th ad: minmatch 0 */
#define GN_SPECWEB99_MAX_MINMATCH  40

#define GN_SPECWEB99_POST_HEADER   11     /* "%10d\n" */
#define GN_SPECWEB99_POST_REC      139

/* demographics masks and the weight nibble of each in "weightings" */
#define GN_SPECWEB99_GENDER        0x30000000u
#define GN_SPECWEB99_AGE           0x0f000000u
#define GN_SPECWEB99_REGION        0x00f00000u
#define GN_SPECWEB99_INTEREST1     0x000ffc00u
#define GN_SPECWEB99_INTEREST2     0x000003ffu

#define GN_SPECWEB99_TAG_PREFIX    "<!WEB99CAD><IMG SRC=\"/file_set/dir"


/* One file of the set, as gn_specweb99_file_init() describes it. */
typedef struct {
    uint64_t    key;          /* PRNG key from (seed, dir, class, num) */
    uint64_t    size;
    int         dir;
    int         cls;
    int         num;
    int         ad;           /* -1: tags as on disk; else rewritten */
} gn_specweb99_file_t;


typedef struct {
    int         id;
    uint32_t    dem;
    uint32_t    weightings;
    int         minmatch;
    int64_t     expiry;
} gn_specweb99_ad_t;


/* The result of a custom ad rotation scan (the found_cookie values). */
typedef struct {
    int         id;           /* -1: no ad qualified */
    int         weight;
    int         expired;
} gn_specweb99_pick_t;


uint64_t gn_specweb99_mix(uint64_t x);
uint64_t gn_specweb99_next(uint64_t *state);

int gn_specweb99_numdirs(int conns);
uint64_t gn_specweb99_file_size(int cls, int num);
uint64_t gn_specweb99_dir_bytes(void);
int gn_specweb99_file_tags(int cls, int num);

void gn_specweb99_file_init(gn_specweb99_file_t *f, uint64_t seed, int dir,
    int cls, int num, int ad);
void gn_specweb99_file_read(const gn_specweb99_file_t *f, uint64_t off,
    unsigned char *buf, size_t len);
void gn_specweb99_tag_write(unsigned char *tag, int dir, int cls, int num);

int gn_specweb99_users(int maxload);
uint32_t gn_specweb99_user_dem(uint64_t seed, int user);
void gn_specweb99_user_record(unsigned char *rec, int user, uint32_t dem);
int gn_specweb99_user_parse(const unsigned char *rec, uint32_t *dem);

void gn_specweb99_ad_make(gn_specweb99_ad_t *ad, uint64_t seed, int id,
    int64_t now, int64_t expiry, int exp_lo, int exp_hi);
void gn_specweb99_ad_record(unsigned char *rec, const gn_specweb99_ad_t *ad);
int gn_specweb99_ad_parse(const unsigned char *rec, gn_specweb99_ad_t *ad);
int gn_specweb99_ad_weight(uint32_t user_dem, const gn_specweb99_ad_t *ad);
void gn_specweb99_ad_pick(gn_specweb99_pick_t *pick, uint32_t user_dem,
    const gn_specweb99_ad_t *ads, int last_ad, int64_t now);

uint64_t gn_specweb99_fnv1a(uint64_t h, const unsigned char *p, size_t len);

#define GN_SPECWEB99_FNV_INIT  0xcbf29ce484222325ULL


#endif /* GN_TOOLS_SPECWEB99_DATA_H_INCLUDED */
