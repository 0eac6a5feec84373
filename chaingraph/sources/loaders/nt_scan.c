/* The N-Triples loader's per-row loops, compiled (see nt_native.py, which loads this library,
 * and nt_views.py, whose numpy functions compute exactly the same and are used without it).
 *
 * Every function takes a block of decompressed lines (`buf`) and int64 row arrays of offsets
 * into it; none keeps a pointer or allocates. cg_split_lines also needs the 16 bytes of zero
 * padding that follow the block's `size` bytes (nt_views._PAD; see count_bytes).
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
