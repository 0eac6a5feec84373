/* The N-Triples loader's per-row loops, compiled (see nt_native.py, which loads this library,
 * and nt_views.py, whose numpy functions compute exactly the same and are used without it).
 *
 * Every function takes a block of decompressed lines (`buf`) and int64 row arrays of offsets
 * into it; none keeps a pointer or allocates. The zero padding that follows the block's
 * `size` bytes (nt_views._PAD) is read too: 16 bytes of it by cg_split_lines (see
 * count_bytes), and a statement node's check reads the 58 bytes from a term's first byte
 * whatever the term (see statement_dash), as the numpy version does.
 * The caller (Python, through ctypes, with the GIL released) owns every array.
 */
#include <stdint.h>
#include <string.h>

static int64_t find_byte(const uint8_t *buf, int64_t from, int64_t to, uint8_t byte) {
    if (from >= to) return -1;
    const uint8_t *at = memchr(buf + from, byte, (size_t)(to - from));
    return at ? (int64_t)(at - buf) : -1;
}

/* The number of lines in buf[0:size] (the last may lack its newline). */
int64_t cg_count_lines(const uint8_t *buf, int64_t size) {
    int64_t n = 0, at = 0;
    while (at < size) {
        int64_t nl = find_byte(buf, at, size, '\n');
        n++;
        if (nl < 0) break;
        at = nl + 1;
    }
    return n;
}

/* How many of the bytes that matter buf[from:to] holds, 16 bytes at a time (GCC/Clang vector
 * extensions). A load may read up to 15 bytes past `to`: the block is followed by 16 bytes
 * of padding (nt_views._PAD), and lanes past `to` are masked off. */
typedef uint8_t v16 __attribute__((vector_size(16)));
typedef struct { int64_t gt, quote, space, tab, backslash; } Counts;

static int64_t lanes_sum(v16 v) {  /* the sum of 16 byte lanes */
    uint64_t half[2];
    memcpy(half, &v, 16);
    uint64_t total = 0;
    for (int i = 0; i < 2; i++) {
        uint64_t x = (half[i] & 0x00FF00FF00FF00FFull) + ((half[i] >> 8) & 0x00FF00FF00FF00FFull);
        total += (x * 0x0001000100010001ull) >> 48;
    }
    return (int64_t)total;
}

static Counts count_bytes(const uint8_t *buf, int64_t from, int64_t to) {
    static const v16 iota = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};
    Counts c = {0, 0, 0, 0, 0};
    int64_t p = from;
    while (p < to) {  /* at most 255 chunks per round: a lane counts to 255 */
        v16 gt = {0}, quote = {0}, space = {0}, tab = {0}, backslash = {0};
        for (int chunk = 0; chunk < 255 && p < to; chunk++, p += 16) {
            v16 v;
            memcpy(&v, buf + p, 16);
            int64_t left = to - p;
            v16 live = (v16)(iota < (uint8_t)(left < 16 ? left : 16));
            gt -= (v16)(v == '>') & live;
            quote -= (v16)(v == '"') & live;
            space -= (v16)(v == ' ') & live;
            tab -= (v16)(v == '\t') & live;
            backslash -= (v16)(v == '\\') & live;
        }
        c.gt += lanes_sum(gt);
        c.quote += lanes_sum(quote);
        c.space += lanes_sum(space);
        c.tab += lanes_sum(tab);
        c.backslash += lanes_sum(backslash);
    }
    return c;
}

/* Split the `lines` lines of buf[0:size] (cg_count_lines); every output array has `lines`
 * entries, as nt_views.split_lines returns them (its docstring says which lines are ok; the
 * term offsets of the others mean nothing). */
void cg_split_lines(const uint8_t *buf, int64_t size, int64_t lines,
                    int64_t *line_start, int64_t *line_end, uint8_t *ok_out,
                    int64_t *s_end, int64_t *p_end, int64_t *o_start, int64_t *o_end,
                    int8_t *literal_out, int64_t *suffix_start) {
    int64_t start = 0;
    for (int64_t i = 0; i < lines; i++) {
        int64_t nl = find_byte(buf, start, size, '\n');
        if (nl < 0) nl = size;
        int64_t end = (nl > start && buf[nl - 1] == '\r') ? nl - 1 : nl;
        int ok = 0, plain = 0, escaped_literal = 0;
        int64_t sp1 = -1, sp2 = -1, os = start, oe = start, suffix = start;
        if (end - start >= 9) {  /* the shortest triple: <> <> "". */
            sp1 = find_byte(buf, start, end, ' ');
            sp2 = sp1 < 0 ? -1 : find_byte(buf, sp1 + 1, end, ' ');
        }
        if (sp2 > 0) {
            uint8_t first = buf[start];
            oe = end - 1 - (buf[end - 2] == ' ');  /* before " ." or "." */
            os = sp2 + 1;
            /* an IRI ends at its first '>': the subject's (when it is an IRI) and the
             * predicate's are the only ones before the object, each right before its space */
            Counts head = count_bytes(buf, start, os);
            ok = ((first == '<' && buf[sp1 - 1] == '>' && head.gt == 2)
                  || (first == '_' && buf[start + 1] == ':' && sp1 - start >= 3 && head.gt == 1))
                 && buf[sp1 + 1] == '<' && buf[sp2 - 1] == '>' && sp2 - sp1 >= 3 && buf[end - 1] == '.'
                 && oe > os && buf[oe - 1] != ' ' && buf[oe - 1] != '\t' && head.tab == 0;
            if (ok) {
                uint8_t o_first = buf[os], o_last = buf[oe - 1];
                Counts obj = count_bytes(buf, os, oe);
                /* an IRI or blank-node object: no space, tab or backslash, an IRI one '>' */
                int term = ((o_first == '<' && o_last == '>' && obj.gt == 1)
                            || (o_first == '_' && buf[os + 1] == ':' && oe - os >= 3))
                           && obj.space == 0 && obj.tab == 0 && obj.backslash == 0 && head.backslash == 0;
                int literal = o_first == '"' && head.backslash == 0;
                plain = literal && obj.backslash == 0 && obj.quote == 2;  /* its suffix is checked later */
                escaped_literal = literal && obj.backslash > 0;           /* its escapes are checked later */
                suffix = oe;
                if (plain)  /* after the closing quote */
                    while (buf[suffix - 1] != '"') suffix--;
                ok = term || plain || escaped_literal;
            }
        }
        line_start[i] = start;
        line_end[i] = nl;
        ok_out[i] = (uint8_t)ok;
        s_end[i] = sp1;
        p_end[i] = sp2;
        o_start[i] = os;
        o_end[i] = oe;
        literal_out[i] = (int8_t)(plain ? 1 : escaped_literal ? 2 : 0);
        suffix_start[i] = suffix;
        start = nl + 1;
    }
}

/* Arrow string views of buf[start[i]:end[i]] into `out` (16 bytes each: the length, then
 * up to 12 bytes inline, zero after the string, or a 4-byte prefix, buffer 0 and the offset). */
void cg_views(const uint8_t *buf, const int64_t *start, const int64_t *end, int64_t n, uint8_t *out) {
    for (int64_t i = 0; i < n; i++) {
        uint8_t *view = out + 16 * i;
        int64_t len = end[i] > start[i] ? end[i] - start[i] : 0;
        uint32_t length = (uint32_t)len, buffer_index = 0, offset = (uint32_t)start[i];
        memcpy(view, &length, 4);
        if (len <= 12) {
            memset(view + 4, 0, 12);
            memcpy(view + 4, buf + start[i], (size_t)len);
        } else {
            memcpy(view + 4, buf + start[i], 4);
            memcpy(view + 8, &buffer_index, 4);
            memcpy(view + 12, &offset, 4);
        }
    }
}

/* out[i] = whether buf[start[i]:end[i]] starts with prefix[0:k]. */
void cg_starts_with(const uint8_t *buf, const int64_t *start, const int64_t *end, int64_t n,
                    const uint8_t *prefix, int64_t k, uint8_t *out) {
    for (int64_t i = 0; i < n; i++)
        out[i] = end[i] - start[i] >= k && memcmp(buf + start[i], prefix, (size_t)k) == 0;
}

/* ---- the checks that vouch for ids (nt_views.surely_*: False means "check it exactly") ---- */

static const uint8_t ENTITY_IRI[] = "<http://www.wikidata.org/entity/";               /* 32 bytes */
static const uint8_t STATEMENT_IRI[] = "<http://www.wikidata.org/entity/statement/";  /* 42 bytes */
#define ENTITY_IRI_LEN 32
#define STATEMENT_IRI_LEN 42

static int is_digit(uint8_t c) { return c >= '0' && c <= '9'; }

/* Where the '-' after a statement node's letter and digits is: the first non-digit of the 15
 * bytes after its letter, or the byte after the letter when all 15 are digits (as numpy's
 * argmin of the digit run gives it; such a node is left to the exact check). */
static int64_t statement_dash(const uint8_t *buf, int64_t local) {
    for (int j = 0; j < 15; j++)
        if (!is_digit(buf[local + 1 + j])) return local + 1 + j;
    return local + 1;
}

/* out[i] = statement_dash at local[i] (nt_views.statement_dashes). */
void cg_statement_dashes(const uint8_t *buf, const int64_t *local, int64_t n, int64_t *out) {
    for (int64_t i = 0; i < n; i++) out[i] = statement_dash(buf, local[i]);
}

/* Surely <...entity/statement/[QPLqpl][0-9]+-[^$]+>? `dash` gets where its '-' is. */
static int surely_statement(const uint8_t *buf, int64_t s, int64_t e, int64_t *dash) {
    int64_t local = s + STATEMENT_IRI_LEN;
    *dash = statement_dash(buf, local);  /* reads inside the block's padding for a short term */
    if (e - s < STATEMENT_IRI_LEN || memcmp(buf + s, STATEMENT_IRI, STATEMENT_IRI_LEN) != 0 || buf[e - 1] != '>')
        return 0;
    uint8_t letter = buf[local];
    if (!(letter == 'Q' || letter == 'P' || letter == 'L' || letter == 'q' || letter == 'p' || letter == 'l'))
        return 0;
    int64_t d = *dash;
    return d > local + 1 && buf[d] == '-' && e - 1 - (d + 1) >= 1 && !memchr(buf + d, '$', (size_t)(e - d));
}

/* nt_views.surely_statements: ok[i] and dash[i] of the terms buf[start[i]:end[i]]. */
void cg_surely_statements(const uint8_t *buf, const int64_t *start, const int64_t *end, int64_t n,
                          uint8_t *ok, int64_t *dash) {
    for (int64_t i = 0; i < n; i++) ok[i] = (uint8_t)surely_statement(buf, start[i], end[i], dash + i);
}

/* Surely <...entity/X[1-9][0-9]{0,11}> with X one of `letters`? */
static int surely_entity(const uint8_t *buf, int64_t s, int64_t e, const char *letters) {
    if (e - s < ENTITY_IRI_LEN || memcmp(buf + s, ENTITY_IRI, ENTITY_IRI_LEN) != 0 || buf[e - 1] != '>')
        return 0;
    int64_t local = s + ENTITY_IRI_LEN, width = e - 1 - local;
    if (width < 2 || width > 13 || buf[local] == 0 || !strchr(letters, buf[local])) return 0;
    if (buf[local + 1] < '1' || buf[local + 1] > '9') return 0;
    for (int64_t j = 1; j < width - 1; j++)
        if (!is_digit(buf[local + 1 + j])) return 0;
    return 1;
}

/* nt_views.surely_claims: an entity IRI of an item or property as subject, a statement node
 * as object. */
void cg_surely_claims(const uint8_t *buf, const int64_t *s0, const int64_t *s1, const int64_t *o0,
                      const int64_t *o1, int64_t n, uint8_t *out) {
    int64_t dash;
    for (int64_t i = 0; i < n; i++)
        out[i] = (uint8_t)(surely_entity(buf, s0[i], s1[i], "QP") && surely_statement(buf, o0[i], o1[i], &dash));
}

/* nt_views.surely_entity_values: an entity IRI of an item, property, lexeme, entity schema
 * or media info. */
void cg_surely_entity_values(const uint8_t *buf, const int64_t *start, const int64_t *end, int64_t n,
                             uint8_t *out) {
    for (int64_t i = 0; i < n; i++) out[i] = (uint8_t)surely_entity(buf, start[i], end[i], "QPLEM");
}

/* nt_views.same_terms: are the length[i] bytes at a[i] and b[i] the same (False beyond width)? */
void cg_same_terms(const uint8_t *buf, const int64_t *a, const int64_t *b, const int64_t *length, int64_t n,
                   int64_t width, uint8_t *out) {
    for (int64_t i = 0; i < n; i++)
        out[i] = length[i] <= width && memcmp(buf + a[i], buf + b[i], (size_t)length[i]) == 0;
}

/* nt_views.intern: number the distinct terms buf[start[i]:end[i]] in order of first
 * appearance (entry[i]); firsts[k] is the row where term k first appears. `table` has
 * mask + 1 slots, each -1 on entry (an open-addressing hash table the caller owns, at least
 * twice as many slots as rows). Returns the number of distinct terms. */
int64_t cg_intern(const uint8_t *buf, const int64_t *start, const int64_t *end, int64_t n,
                  int64_t *table, int64_t mask, int32_t *entry, int64_t *firsts) {
    int64_t count = 0;
    for (int64_t i = 0; i < n; i++) {
        const uint8_t *term = buf + start[i];
        int64_t len = end[i] - start[i];
        uint64_t h = (uint64_t)len * 0x9E3779B97F4A7C15ull, word;  /* 8 bytes a step, then the rest */
        int64_t j = 0;
        for (; j + 8 <= len; j += 8) {
            memcpy(&word, term + j, 8);
            h = (h ^ word) * 0xFF51AFD7ED558CCDull;
            h ^= h >> 32;
        }
        for (; j < len; j++) h = (h ^ term[j]) * 0xC4CEB9FE1A85EC53ull;
        h ^= h >> 29;
        for (int64_t slot = (int64_t)(h & (uint64_t)mask);; slot = (slot + 1) & mask) {
            int64_t k = table[slot];
            if (k < 0) {
                table[slot] = count;
                firsts[count] = i;
                entry[i] = (int32_t)count++;
                break;
            }
            int64_t f = firsts[k];
            if (end[f] - start[f] == len && memcmp(buf + start[f], term, (size_t)len) == 0) {
                entry[i] = (int32_t)k;
                break;
            }
        }
    }
    return count;
}
