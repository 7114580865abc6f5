/* The sound stage's depth-first search of domain/solver/search.py (``Search.run`` with stage SOUND), in C.
 *
 * An optional speed-up: it makes exactly the moves the Python search makes, in the same order, with
 * the same transposition table (twin merging, the pointer rule), the same automatic moves and the
 * same budget checks, so for the same start it answers the same (won with the same macro line,
 * lost, or out of budget) after the same number of positions. The Python code is the reference
 * (each function below names the method it follows); tests/unit/test_solver_native.py compares the
 * two. Pure computation: no I/O. The GIL is released while searching and taken back only to ask the
 * caller's ``out_of_time`` every ``check_every`` positions.
 *
 * start(reserve_cards, base, draw, free_recycle, any_run, returns, auto_home, auto_talon, twins,
 *       start, states) -> search
 *     a search (a capsule holding its table and depth-first stack), not yet run; start is a solver
 *     Position, states the positions the search has counted already (the count goes on from there).
 * resume(search, max_states, check_every, out_of_time) -> (status, states, line)
 *     search (on from where the last resume stopped out of budget, as if it had never stopped: the
 *     same moves and positions, the same count, so the same answer as one run with the last limits).
 *     status 0: lost (every position searched, line None), 1: won (line: list of macro tuples),
 *     2: out of budget (line None; resume goes on); max_states -1 means no limit. After status 0
 *     or 1, or an error, it cannot resume.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define NCARDS 52
#define TWIN_FIRST 64
#define K_RESERVE 0
#define K_TALON 1
#define K_TABLEAU 2
#define K_FOUNDATION 3
#define TO_FOUNDATION (-1)
#define NEVER (1 << 30)
#define TWIN_MAX_CARDS 26
#define MAX_MOVES 1024 /* far above the most one position has (about 420) */

typedef struct {
    int32_t kind, card, target, detail;
} Move;

typedef struct {
    uint8_t reserve;
    uint8_t found[4];
    uint8_t len[4];
    uint8_t talon_len;
    uint8_t pointer;
    uint8_t progress;
    uint8_t cols[4][NCARDS];
    uint8_t talon[NCARDS];
} Pos;

/* The transposition table: open addressing over records in one byte arena, each 8-byte aligned:
 * the key (its first byte its length) and then, one byte per pointer residue, the lowest pointer
 * its cards were searched from (LOWEST_NEVER: none). The slot holds the key's hash, so a probe
 * reads a record only when the hashes match, and one record read answers a lookup. */
typedef struct {
    uint32_t hash;
    uint32_t record; /* the record's offset / 8, plus 1; 0: empty */
} Slot;

#define LOWEST_NEVER 255
#define MAX_KEY (8 + 4 + NCARDS)

typedef struct {
    Move move;
} PathItem;

typedef struct {
    Pos pos;
    size_t mstart, mcount, mnext;
    int added;
} Frame;

typedef struct {
    int base, draw, free_recycle, any_run, returns, auto_home, auto_talon, twins;
    uint8_t reserve_cards[NCARDS];
    uint8_t rel[NCARDS];
    long long states, max_states, check_every;
    PyObject *out_of_time;
    PyThreadState *thread;
    int error;       /* 1: out of memory, 2: a Python exception is set */
    int out_of_budget;
    int searched_from;
    /* resuming (``resume``): 0 not started, 1 searching, 2 ended (won or lost), 3 broken (an error) */
    int phase;
    int pending; /* stopped out of budget after counting a position not yet entered: enter it first */
    int busy;    /* a resume is running (the GIL is released while searching) */
    Pos start;
    /* table */
    Slot *slots;
    size_t slot_cap, nentries;
    uint8_t *keys;
    size_t keys_len, keys_cap;
    /* path, frames, moves */
    Move *path;
    size_t path_len, path_cap;
    Frame *frames;
    size_t nframes, frames_cap;
    Move *arena;
    size_t arena_len, arena_cap;
} Search;

static uint8_t RANK[NCARDS], SUIT[NCARDS], TWIN[NCARDS], FITS_ON[NCARDS][2];
static uint32_t CLASS_BIT[NCARDS];
static const uint8_t OPPOSITE[4][2] = {{1, 2}, {0, 3}, {0, 3}, {1, 2}};

static void init_tables(void) {
    for (int card = 0; card < NCARDS; card++) {
        RANK[card] = (uint8_t)(card % 13);
        SUIT[card] = (uint8_t)(card / 13);
    }
    for (int card = 0; card < NCARDS; card++) {
        int suit = SUIT[card], rank = RANK[card];
        for (int i = 0; i < 2; i++)
            FITS_ON[card][i] = (uint8_t)(OPPOSITE[suit][i] * 13 + (rank + 12) % 13);
        TWIN[card] = (uint8_t)((3 - suit) * 13 + rank);
        CLASS_BIT[card] = 1u << (rank * 2 + (suit == 1 || suit == 2));
    }
}

static int grow(void **buffer, size_t *cap, size_t need, size_t item) {
    if (need <= *cap)
        return 0;
    size_t wanted = *cap ? *cap : 64;
    while (wanted < need)
        wanted *= 2;
    void *bigger = realloc(*buffer, wanted * item);
    if (bigger == NULL)
        return -1;
    *buffer = bigger;
    *cap = wanted;
    return 0;
}

/* -------------------------------------------------------------- rules on positions */

static inline int is_next(const Search *s, const Pos *p, int card) { return p->found[SUIT[card]] == s->rel[card]; }

/* Search.safe */
static inline int is_safe(const Search *s, const Pos *p, int card) {
    int relative = s->rel[card];
    int need = relative ? relative : 13;
    return p->found[OPPOSITE[SUIT[card]][0]] >= need && p->found[OPPOSITE[SUIT[card]][1]] >= need;
}

static inline int can_recycle(const Search *s, int progress) { return s->free_recycle || progress; }

/* talon.talon_positions through Search.reachable */
static int reachable(const Search *s, const Pos *p, int *out) {
    int size = p->talon_len, pointer = p->pointer, draw = s->draw, n = 0, q;
    uint8_t seen[NCARDS + 1];
    if (pointer)
        out[n++] = pointer;
    q = pointer;
    while (q < size) {
        q = q + draw < size ? q + draw : size;
        out[n++] = q;
    }
    if (can_recycle(s, p->progress) && size) {
        memset(seen, 0, sizeof seen);
        for (int i = 0; i < n; i++)
            seen[out[i]] = 1;
        q = 0;
        while (q < size) {
            q = q + draw < size ? q + draw : size;
            if (!seen[q])
                out[n++] = q;
        }
    }
    return n;
}

/* Search.play (in place) */
static void play(const Search *s, Pos *p, int kind, int card, int target, int detail) {
    uint8_t moved[NCARDS];
    int nmoved = 1;
    if (detail >= TWIN_FIRST) {
        int code = detail / TWIN_FIRST - 1;
        play(s, p, K_TABLEAU, code / 16, code % 4, code / 4 % 4);
        detail %= TWIN_FIRST;
    }
    moved[0] = (uint8_t)card;
    if (kind == K_RESERVE) {
        p->reserve--;
    } else if (kind == K_TALON) {
        memmove(p->talon + detail - 1, p->talon + detail, (size_t)(p->talon_len - detail));
        p->talon_len--;
        p->pointer = (uint8_t)(detail - 1);
    } else if (kind == K_FOUNDATION) {
        p->found[SUIT[card]]--;
    } else {
        uint8_t *source = p->cols[detail];
        int length = p->len[detail], index = 0;
        while (index < length && source[index] != card)
            index++;
        nmoved = length - index;
        memcpy(moved, source + index, (size_t)nmoved);
        p->len[detail] = (uint8_t)index;
        if (index == 0 && p->reserve) {
            source[0] = s->reserve_cards[p->reserve - 1];
            p->len[detail] = 1;
            p->reserve--;
        }
    }
    if (target == TO_FOUNDATION) {
        p->found[SUIT[card]]++;
    } else {
        memcpy(p->cols[target] + p->len[target], moved, (size_t)nmoved);
        p->len[target] = (uint8_t)(p->len[target] + nmoved);
    }
    p->progress = 1;
}

static int path_push(Search *s, int kind, int card, int target, int detail) {
    if (grow((void **)&s->path, &s->path_cap, s->path_len + 1, sizeof(Move)))
        return -1;
    Move *m = &s->path[s->path_len++];
    m->kind = kind;
    m->card = card;
    m->target = target;
    m->detail = detail;
    return 0;
}

/* Search._auto_talon (the sound stage's branch) */
static int auto_talon_move(const Search *s, const Pos *p, Move *move) {
    if (!s->auto_talon || !can_recycle(s, p->progress))
        return 0;
    for (int q = 1; q <= p->talon_len; q++) {
        int card = p->talon[q - 1];
        if (is_next(s, p, card) && is_safe(s, p, card)) {
            move->kind = K_TALON;
            move->card = card;
            move->target = TO_FOUNDATION;
            move->detail = q;
            return 1;
        }
    }
    return 0;
}

/* Search.auto */
static int auto_home(Search *s, Pos *p) {
    for (;;) {
        Move move;
        int have = 0;
        int card = p->reserve ? s->reserve_cards[p->reserve - 1] : -1;
        if (p->reserve && is_next(s, p, card) && is_safe(s, p, card)) {
            move.kind = K_RESERVE;
            move.card = card;
            move.target = TO_FOUNDATION;
            move.detail = 0;
            have = 1;
        } else {
            for (int index = 0; index < 4; index++) {
                if (p->len[index]) {
                    int end = p->cols[index][p->len[index] - 1];
                    if (is_next(s, p, end) && is_safe(s, p, end)) {
                        move.kind = K_TABLEAU;
                        move.card = end;
                        move.target = TO_FOUNDATION;
                        move.detail = index;
                        have = 1;
                        break;
                    }
                }
            }
            if (!have)
                have = auto_talon_move(s, p, &move);
        }
        if (!have)
            return 0;
        if (path_push(s, move.kind, move.card, move.target, move.detail))
            return -1;
        play(s, p, move.kind, move.card, move.target, move.detail);
    }
}

/* search.twin_room */
static int twin_room(const Pos *p) {
    int cards = p->len[0] + p->len[1] + p->len[2] + p->len[3];
    if (cards < TWIN_MAX_CARDS)
        return 2;
    uint32_t classes = 0;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < p->len[c]; i++)
            classes |= CLASS_BIT[p->cols[c][i]];
    int missing = 26 - __builtin_popcount(classes);
    if (missing >= 2)
        return 2;
    return (missing || cards == TWIN_MAX_CARDS) ? 1 : 0;
}

/* where each card lies in the columns: column * 64 + index, or -1 */
static void locate_all(const uint8_t cols[4][NCARDS], const uint8_t *len, int16_t where[NCARDS]) {
    for (int card = 0; card < NCARDS; card++)
        where[card] = -1;
    for (int c = 0; c < 4; c++)
        for (int i = 0; i < len[c]; i++)
            where[cols[c][i]] = (int16_t)(c * 64 + i);
}

/* Search.merged, on the columns of q (in place) */
static void merged(Pos *q) {
    int any_low = 0;
    for (int c = 0; c < 4; c++)
        if (q->len[c] && q->cols[c][q->len[c] - 1] < 26)
            any_low = 1;
    if (!any_low)
        return;
    int cards = q->len[0] + q->len[1] + q->len[2] + q->len[3];
    if (cards > TWIN_MAX_CARDS && !twin_room(q))
        return;
    int16_t places[NCARDS];
    locate_all((const uint8_t(*)[NCARDS])q->cols, q->len, places);
    int end_index = 0;
    while (end_index < 4) {
        int e = end_index++;
        if (!q->len[e])
            continue;
        int end = q->cols[e][q->len[e] - 1];
        int twin = TWIN[end];
        if (twin < end)
            continue;
        int where = places[twin];
        if (where < 0)
            continue;
        int host = where / 64, at = where % 64 + 1;
        if (at < q->len[host]) {
            uint8_t new_end[NCARDS], new_host[NCARDS];
            int new_end_len = q->len[e] + (q->len[host] - at), new_host_len = at;
            memcpy(new_end, q->cols[e], q->len[e]);
            memcpy(new_end + q->len[e], q->cols[host] + at, (size_t)(q->len[host] - at));
            memcpy(new_host, q->cols[host], (size_t)at);
            memcpy(q->cols[e], new_end, (size_t)new_end_len);
            q->len[e] = (uint8_t)new_end_len;
            memcpy(q->cols[host], new_host, (size_t)new_host_len);
            q->len[host] = (uint8_t)new_host_len;
            locate_all((const uint8_t(*)[NCARDS])q->cols, q->len, places);
            end_index = 0;
        }
    }
}

/* Search.free_twins: (end column, host column, index of the host card) */
static int free_twins(const Pos *p, int out[4][3]) {
    int n = 0;
    int16_t places[NCARDS];
    locate_all(p->cols, p->len, places);
    for (int e = 0; e < 4; e++) {
        if (!p->len[e])
            continue;
        int twin = TWIN[p->cols[e][p->len[e] - 1]];
        int where = places[twin];
        if (where < 0)
            continue;
        int host = where / 64, at = where % 64;
        if (at < p->len[host] - 1) {
            out[n][0] = e;
            out[n][1] = host;
            out[n][2] = at;
            n++;
        }
    }
    return n;
}

static inline void add(Move *list, int *n, int kind, int card, int target, int detail) {
    Move *m = &list[(*n)++];
    m->kind = kind;
    m->card = card;
    m->target = target;
    m->detail = detail;
}

/* Search.moves (the sound stage: free_returns_only is false) */
static int moves(const Search *s, const Pos *p, Move *out) {
    Move first[MAX_MOVES], then[MAX_MOVES], last[MAX_MOVES];
    int nfirst = 0, nthen = 0, nlast = 0;
    uint8_t hcount[NCARDS];
    uint8_t hcol[NCARDS][4];
    int empty_column = -1;
    memset(hcount, 0, sizeof hcount);
    for (int index = 0; index < 4; index++) {
        if (p->len[index]) {
            int end = p->cols[index][p->len[index] - 1];
            for (int i = 0; i < 2; i++) {
                int card = FITS_ON[end][i];
                hcol[card][hcount[card]++] = (uint8_t)index;
            }
        } else if (empty_column < 0) {
            empty_column = index;
        }
    }
    for (int index = 3; index >= 0; index--) {
        if (p->len[index]) {
            int end = p->cols[index][p->len[index] - 1];
            if (is_next(s, p, end))
                add(first, &nfirst, K_TABLEAU, end, TO_FOUNDATION, index);
        }
    }
    int merge = 0;
    if (s->twins && (s->free_recycle || p->progress))
        merge = twin_room(p);
    int hosts_used = merge == 2 ? 1 : 2;
    if (p->reserve) {
        int card = s->reserve_cards[p->reserve - 1];
        if (is_next(s, p, card))
            add(first, &nfirst, K_RESERVE, card, TO_FOUNDATION, 0);
        for (int i = 0; i < hcount[card] && i < hosts_used; i++)
            add(first, &nfirst, K_RESERVE, card, hcol[card][i], 0);
        if (empty_column >= 0)
            add(first, &nfirst, K_RESERVE, card, empty_column, 0);
    }
    int only_hosted = empty_column < 0 && s->any_run; /* starts_of: the cards that fit on an end */
    for (int index = 0; index < 4; index++) {
        int length = p->len[index];
        if (!length)
            continue;
        const uint8_t *column = p->cols[index];
        for (int start = 0; start < length; start++) {
            if (only_hosted) {
                if (!hcount[column[start]])
                    continue;
            } else if (!s->any_run) {
                if (!(start == 0 || start == length - 1))
                    continue;
            }
            int card = column[start];
            int targets[4], ntargets = 0;
            if (merge) {
                if (start == 0) {
                    int used = (merge == 2 || !p->reserve) ? 1 : 2;
                    for (int i = 0; i < hcount[card] && ntargets < used; i++)
                        if (hcol[card][i] != index)
                            targets[ntargets++] = hcol[card][i];
                }
            } else {
                for (int i = 0; i < hcount[card]; i++)
                    targets[ntargets++] = hcol[card][i];
            }
            if (empty_column >= 0 && start > 0)
                targets[ntargets++] = empty_column;
            for (int t = 0; t < ntargets; t++) {
                int target = targets[t];
                if (target == index)
                    continue;
                if (start == 0 || is_next(s, p, column[start - 1]))
                    add(first, &nfirst, K_TABLEAU, card, target, index);
                else
                    add(last, &nlast, K_TABLEAU, card, target, index);
            }
        }
    }
    int places[2 * NCARDS + 2];
    int nplaces = reachable(s, p, places);
    for (int i = 0; i < nplaces; i++) {
        int q = places[i];
        int card = p->talon[q - 1];
        if (is_next(s, p, card))
            add(first, &nfirst, K_TALON, card, TO_FOUNDATION, q);
        for (int h = 0; h < hcount[card] && h < hosts_used; h++)
            add(then, &nthen, K_TALON, card, hcol[card][h], q);
        if (empty_column >= 0)
            add(then, &nthen, K_TALON, card, empty_column, q);
    }
    if (s->returns) {
        for (int suit = 0; suit < 4; suit++) {
            int count = p->found[suit];
            if (count) {
                int card = suit * 13 + (s->base + count - 1) % 13;
                for (int h = 0; h < hcount[card]; h++)
                    add(last, &nlast, K_FOUNDATION, card, hcol[card][h], 0);
                if (empty_column >= 0)
                    add(last, &nlast, K_FOUNDATION, card, empty_column, 0);
            }
        }
    }
    int n = 0;
    memcpy(out, first, sizeof(Move) * (size_t)nfirst);
    n += nfirst;
    memcpy(out + n, then, sizeof(Move) * (size_t)nthen);
    n += nthen;
    memcpy(out + n, last, sizeof(Move) * (size_t)nlast);
    n += nlast;
    if (merge) {
        /* Search.twin_moves over the moves so far */
        int pairs[4][3];
        int npairs = free_twins(p, pairs), base_n = n;
        for (int k = 0; k < npairs; k++) {
            int end_index = pairs[k][0], host_index = pairs[k][1], at = pairs[k][2];
            int host = p->cols[host_index][at], child = p->cols[host_index][at + 1];
            int twin_first = TWIN_FIRST * (1 + (child * 4 + host_index) * 4 + end_index);
            if (is_next(s, p, host))
                add(out, &n, K_TABLEAU, host, TO_FOUNDATION, twin_first + host_index);
            int other = TWIN[child];
            for (int i = 0; i < base_n; i++) {
                Move m = out[i];
                if (m.card == other && m.target == end_index && !(m.kind == K_TABLEAU && m.detail == host_index))
                    add(out, &n, m.kind, m.card, host_index, twin_first + m.detail);
            }
        }
    }
    return n;
}

/* -------------------------------------------------------------- the transposition table */

/* the key's bytes 8 at a time (the buffer is zero past ``length`` to the next multiple of 8) */
static uint32_t hash_key(const uint8_t *key, int length) {
    uint64_t h = 0x9E3779B97F4A7C15ULL ^ (uint64_t)length;
    for (int i = 0; i < length; i += 8) {
        uint64_t word;
        memcpy(&word, key + i, 8);
        h = (h ^ word) * 0xFF51AFD7ED558CCDULL;
        h ^= h >> 32;
    }
    h *= 0xC4CEB9FE1A85EC53ULL;
    h ^= h >> 29;
    return (uint32_t)(h ^ (h >> 32));
}

static int column_less(const Pos *q, int a, int b) {
    int la = q->len[a], lb = q->len[b], n = la < lb ? la : lb;
    for (int i = 0; i < n; i++)
        if (q->cols[a][i] != q->cols[b][i])
            return q->cols[a][i] < q->cols[b][i];
    return la < lb;
}

static int table_grow(Search *s) {
    size_t cap = s->slot_cap ? s->slot_cap * 2 : (1u << 16);
    Slot *slots = calloc(cap, sizeof(Slot));
    if (slots == NULL)
        return -1;
    for (size_t i = 0; i < s->slot_cap; i++) {
        if (s->slots[i].record) {
            size_t j = s->slots[i].hash & (cap - 1);
            while (slots[j].record)
                j = (j + 1) & (cap - 1);
            slots[j] = s->slots[i];
        }
    }
    free(s->slots);
    s->slots = slots;
    s->slot_cap = cap;
    return 0;
}

/* Search.visited: 1 seen (or dominated), 0 new (searched_from set), -1 out of memory */
static int visited(Search *s, const Pos *p) {
    int recycle = s->free_recycle || p->progress;
    int pointer = p->pointer;
    Pos q;
    const Pos *c = p;
    if (s->twins && recycle) {
        memcpy(q.len, p->len, sizeof q.len);
        for (int i = 0; i < 4; i++)
            memcpy(q.cols[i], p->cols[i], p->len[i]);
        merged(&q);
        c = &q;
    }
    uint8_t key[MAX_KEY + 8];
    int length = 1;
    key[length++] = p->reserve;
    for (int i = 0; i < 4; i++)
        key[length++] = p->found[i];
    key[length++] = (uint8_t)recycle;
    if (!recycle) {
        key[length++] = (uint8_t)pointer;
        pointer = 0;
    } else {
        key[length++] = 255;
    }
    int order[4] = {0, 1, 2, 3};
    for (int i = 1; i < 4; i++) {
        int x = order[i], j = i - 1;
        while (j >= 0 && column_less(c, x, order[j])) {
            order[j + 1] = order[j];
            j--;
        }
        order[j + 1] = x;
    }
    for (int i = 0; i < 4; i++) {
        int col = order[i];
        key[length++] = c->len[col];
        memcpy(key + length, c->cols[col], c->len[col]);
        length += c->len[col];
    }
    key[0] = (uint8_t)length;
    memset(key + length, 0, 8); /* hash_key reads whole words */
    if ((s->nentries + 1) * 2 > s->slot_cap && table_grow(s))
        return -1;
    uint32_t h = hash_key(key, length);
    size_t j = h & (s->slot_cap - 1);
    uint8_t *lowest = NULL; /* the found record's lowest pointers */
    while (s->slots[j].record) {
        if (s->slots[j].hash == h) {
            uint8_t *stored = s->keys + ((size_t)(s->slots[j].record - 1) << 3);
            if (stored[0] == length && memcmp(stored, key, (size_t)length) == 0) {
                lowest = stored + length;
                break;
            }
        }
        j = (j + 1) & (s->slot_cap - 1);
    }
    int residue = pointer % s->draw;
    if (lowest == NULL) {
        size_t size = ((size_t)length + 3 + 7) & ~(size_t)7;
        if ((s->keys_len >> 3) + 1 > UINT32_MAX) /* past 32 GiB of records: a slot cannot name it */
            return -1;
        if (grow((void **)&s->keys, &s->keys_cap, s->keys_len + size, 1))
            return -1;
        uint8_t *record = s->keys + s->keys_len;
        memcpy(record, key, (size_t)length);
        lowest = record + length;
        lowest[0] = lowest[1] = lowest[2] = LOWEST_NEVER;
        s->slots[j].hash = h;
        s->slots[j].record = (uint32_t)((s->keys_len >> 3) + 1);
        s->keys_len += size;
        s->nentries++;
        s->searched_from = 0;
    } else if (pointer % s->draw == 0 || pointer == p->talon_len || lowest[residue] <= pointer) {
        return 1;
    } else {
        s->searched_from = lowest[residue] == LOWEST_NEVER ? NEVER : lowest[residue];
    }
    if (lowest[residue] == LOWEST_NEVER || pointer < lowest[residue])
        lowest[residue] = (uint8_t)pointer;
    return 0;
}

/* -------------------------------------------------------------- search */

/* Search.enter: 1 won, 0 to search, 2 seen, -1 stop (out of budget or error) */
/* The count and the budget check of ``enter``: 0 go on, -1 stop (out of budget: ``pending`` set, so a
 * resume enters the position counted here without counting it again; or an error). */
static int count_position(Search *s) {
    s->states++;
    if (s->states % s->check_every == 0) {
        if (s->max_states >= 0 && s->states >= s->max_states) {
            s->out_of_budget = 1;
            s->pending = 1;
            return -1;
        }
        PyEval_RestoreThread(s->thread);
        PyObject *answer = PyObject_CallNoArgs(s->out_of_time);
        int late = answer == NULL ? -1 : PyObject_IsTrue(answer);
        Py_XDECREF(answer);
        s->thread = PyEval_SaveThread();
        if (late < 0) {
            s->error = 2;
            return -1;
        }
        if (late) {
            s->out_of_budget = 1;
            s->pending = 1;
            return -1;
        }
    }
    return 0;
}

/* ``enter`` after the count: 1 won, 0 to search, 2 seen, -1 error */
static int enter_counted(Search *s, Pos *p, int *added) {
    size_t before = s->path_len;
    if (s->auto_home && auto_home(s, p)) {
        s->error = 1;
        return -1;
    }
    *added = (int)(s->path_len - before);
    if (p->found[0] + p->found[1] + p->found[2] + p->found[3] == 52)
        return 1;
    int seen = visited(s, p);
    if (seen < 0) {
        s->error = 1;
        return -1;
    }
    if (seen) {
        s->path_len = before;
        *added = 0;
        return 2;
    }
    return 0;
}

static int enter(Search *s, Pos *p, int *added) {
    if (count_position(s))
        return -1;
    return enter_counted(s, p, added);
}

/* Search.new_moves, in place */
static size_t new_moves(const Search *s, const Pos *p, Move *list, size_t n, int searched_from) {
    int draw = s->draw, residue = p->pointer % draw, size = p->talon_len;
    size_t kept = 0;
    for (size_t i = 0; i < n; i++) {
        Move m = list[i];
        if (m.kind != K_TALON) {
            list[kept++] = m;
            continue;
        }
        int q = m.detail % TWIN_FIRST;
        if (q % draw == residue && q < searched_from && q != size)
            list[kept++] = m;
    }
    return kept;
}

static int push_frame(Search *s, const Pos *p, int added, int filter) {
    if (grow((void **)&s->arena, &s->arena_cap, s->arena_len + MAX_MOVES, sizeof(Move)) ||
        grow((void **)&s->frames, &s->frames_cap, s->nframes + 1, sizeof(Frame)))
        return -1;
    Move *list = s->arena + s->arena_len;
    size_t n = (size_t)moves(s, p, list);
    if (filter && s->searched_from)
        n = new_moves(s, p, list, n, s->searched_from);
    Frame *f = &s->frames[s->nframes++];
    f->pos = *p;
    f->mstart = s->arena_len;
    f->mcount = n;
    f->mnext = 0;
    f->added = added;
    s->arena_len += n;
    return 0;
}

/* Search.run: 1 won (the line in s->path), 0 lost, -1 stopped (out of budget: a call again goes on
 * from there, see ``resume``; or an error). A resumed search makes the moves the uninterrupted one
 * makes: the stack, the path and the table are kept, and a position counted just before the stop
 * (``pending``) is entered first, without counting it again. */
static int search_run(Search *s) {
    int r, added = 0;
    s->out_of_budget = 0;
    if (s->phase == 0) {
        Pos position = s->start;
        if (s->pending) {
            s->pending = 0;
            r = enter_counted(s, &position, &added);
        } else {
            r = enter(s, &position, &added);
        }
        if (r < 0)
            return -1;
        if (r == 1 || r == 2) {
            s->phase = 2;
            return r == 1 ? 1 : 0;
        }
        if (push_frame(s, &position, added, 0)) {
            s->error = 1;
            return -1;
        }
        s->phase = 1;
    }
    while (s->nframes) {
        Frame *f = &s->frames[s->nframes - 1];
        Move move;
        int child_added = 0;
        Pos child;
        if (s->pending) { /* the move made just before the stop: its position was counted */
            s->pending = 0;
            move = s->path[s->path_len - 1];
            child = f->pos;
            play(s, &child, move.kind, move.card, move.target, move.detail);
            r = enter_counted(s, &child, &child_added);
        } else {
            if (f->mnext == f->mcount) {
                s->arena_len = f->mstart;
                if (f->added)
                    s->path_len -= (size_t)f->added;
                s->nframes--;
                if (s->nframes)
                    s->path_len--;
                continue;
            }
            move = s->arena[f->mstart + f->mnext++];
            if (path_push(s, move.kind, move.card, move.target, move.detail)) {
                s->error = 1;
                return -1;
            }
            child = f->pos;
            play(s, &child, move.kind, move.card, move.target, move.detail);
            r = enter(s, &child, &child_added);
        }
        if (r < 0)
            return -1;
        if (r == 1) {
            s->phase = 2;
            return 1;
        }
        if (r == 2) {
            s->path_len--;
            continue;
        }
        if (push_frame(s, &child, child_added, 1)) {
            s->error = 1;
            return -1;
        }
    }
    s->phase = 2;
    return 0;
}

/* -------------------------------------------------------------- the Python side */

static int read_cards(PyObject *sequence, uint8_t *out, int limit, const char *what) {
    PyObject *fast = PySequence_Fast(sequence, what);
    if (fast == NULL)
        return -1;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(fast);
    if (n > limit) {
        Py_DECREF(fast);
        PyErr_Format(PyExc_ValueError, "%s: too many cards", what);
        return -1;
    }
    for (Py_ssize_t i = 0; i < n; i++) {
        long card = PyLong_AsLong(PySequence_Fast_GET_ITEM(fast, i));
        if (card == -1 && PyErr_Occurred()) {
            Py_DECREF(fast);
            return -1;
        }
        if (card < 0 || card >= NCARDS) {
            Py_DECREF(fast);
            PyErr_Format(PyExc_ValueError, "%s: not a card: %ld", what, card);
            return -1;
        }
        out[i] = (uint8_t)card;
    }
    Py_DECREF(fast);
    return (int)n;
}

static int read_position(PyObject *start, Pos *p) {
    PyObject *found, *columns, *talon;
    int reserve, pointer, progress;
    memset(p, 0, sizeof *p);
    if (!PyArg_ParseTuple(start, "iOOOip;a solver position", &reserve, &found, &columns, &talon, &pointer, &progress))
        return -1;
    uint8_t counts[4];
    if (read_cards(found, counts, 4, "foundations") != 4) {
        if (!PyErr_Occurred())
            PyErr_SetString(PyExc_ValueError, "foundations: four counts");
        return -1;
    }
    PyObject *fast = PySequence_Fast(columns, "columns");
    if (fast == NULL)
        return -1;
    if (PySequence_Fast_GET_SIZE(fast) != 4) {
        Py_DECREF(fast);
        PyErr_SetString(PyExc_ValueError, "columns: four");
        return -1;
    }
    for (int c = 0; c < 4; c++) {
        int n = read_cards(PySequence_Fast_GET_ITEM(fast, c), p->cols[c], NCARDS, "column");
        if (n < 0) {
            Py_DECREF(fast);
            return -1;
        }
        p->len[c] = (uint8_t)n;
    }
    Py_DECREF(fast);
    int n = read_cards(talon, p->talon, NCARDS, "talon");
    if (n < 0)
        return -1;
    if (reserve < 0 || reserve > NCARDS || pointer < 0 || pointer > n) {
        PyErr_SetString(PyExc_ValueError, "reserve count or pointer out of range");
        return -1;
    }
    memcpy(p->found, counts, 4);
    p->talon_len = (uint8_t)n;
    p->reserve = (uint8_t)reserve;
    p->pointer = (uint8_t)pointer;
    p->progress = (uint8_t)progress;
    return 0;
}

static void release(Search *s) {
    free(s->slots);
    free(s->keys);
    free(s->path);
    free(s->frames);
    free(s->arena);
}

/* The rules and the start of a search from ``start``'s arguments: 0, or -1 with an exception. */
static int setup(Search *s, PyObject *reserve_cards, PyObject *start, long long states) {
    if (s->draw < 1 || s->draw > 3 || s->base < 0 || s->base > 12) {
        PyErr_SetString(PyExc_ValueError, "draw must be 1..3 and base 0..12");
        return -1;
    }
    if (read_cards(reserve_cards, s->reserve_cards, NCARDS, "reserve") < 0 || read_position(start, &s->start) < 0)
        return -1;
    for (int card = 0; card < NCARDS; card++)
        s->rel[card] = (uint8_t)(((RANK[card] - s->base) % 13 + 13) % 13);
    s->states = states;
    return 0;
}

/* Search on (from the start, or from where it stopped) with these limits: (status, states, line). */
static PyObject *search_on(Search *s, long long max_states, long long check_every, PyObject *out_of_time) {
    if (check_every <= 0) {
        PyErr_SetString(PyExc_ZeroDivisionError, "check_every must be positive");
        return NULL;
    }
    if (!PyCallable_Check(out_of_time)) {
        PyErr_SetString(PyExc_TypeError, "out_of_time must be callable");
        return NULL;
    }
    s->max_states = max_states;
    s->check_every = check_every;
    s->out_of_time = out_of_time;
    s->busy = 1;
    s->thread = PyEval_SaveThread();
    int r = search_run(s);
    PyEval_RestoreThread(s->thread);
    s->busy = 0;
    s->out_of_time = NULL;
    if (r < 0 && s->error) {
        s->phase = 3;
        if (s->error == 1)
            PyErr_NoMemory();
        /* error 2: the exception out_of_time raised is set */
        return NULL;
    }
    if (r < 0)
        return Py_BuildValue("(iLO)", 2, s->states, Py_None);
    if (r == 0)
        return Py_BuildValue("(iLO)", 0, s->states, Py_None);
    PyObject *line = PyList_New((Py_ssize_t)s->path_len);
    if (line == NULL)
        return NULL;
    for (size_t i = 0; i < s->path_len; i++) {
        Move m = s->path[i];
        PyObject *item = Py_BuildValue("(iiii)", m.kind, m.card, m.target, m.detail);
        if (item == NULL) {
            Py_DECREF(line);
            return NULL;
        }
        PyList_SET_ITEM(line, (Py_ssize_t)i, item);
    }
    return Py_BuildValue("(iLN)", 1, s->states, line);
}

#define CAPSULE "domain._sound.search"

static void capsule_free(PyObject *capsule) {
    Search *s = PyCapsule_GetPointer(capsule, CAPSULE);
    if (s != NULL) {
        release(s);
        free(s);
    }
}

static PyObject *sound_start(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *reserve_cards, *start;
    long long states;
    Search *s = calloc(1, sizeof *s);
    if (s == NULL)
        return PyErr_NoMemory();
    if (!PyArg_ParseTuple(args, "OiippppppOL", &reserve_cards, &s->base, &s->draw, &s->free_recycle, &s->any_run,
                          &s->returns, &s->auto_home, &s->auto_talon, &s->twins, &start, &states) ||
        setup(s, reserve_cards, start, states) < 0) {
        free(s);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(s, CAPSULE, capsule_free);
    if (capsule == NULL) {
        release(s);
        free(s);
    }
    return capsule;
}

static PyObject *sound_resume(PyObject *self, PyObject *args) {
    (void)self;
    PyObject *capsule, *out_of_time;
    long long max_states, check_every;
    if (!PyArg_ParseTuple(args, "OLLO", &capsule, &max_states, &check_every, &out_of_time))
        return NULL;
    Search *s = PyCapsule_GetPointer(capsule, CAPSULE);
    if (s == NULL)
        return NULL;
    if (s->busy) {
        PyErr_SetString(PyExc_RuntimeError, "this search is running already");
        return NULL;
    }
    if (s->phase >= 2) {
        PyErr_SetString(PyExc_RuntimeError,
                        s->phase == 2 ? "this search has ended (won or lost): it cannot go on"
                                      : "this search stopped with an error: it cannot go on");
        return NULL;
    }
    return search_on(s, max_states, check_every, out_of_time);
}

static PyMethodDef methods[] = {
    {"start", sound_start, METH_VARARGS,
     "start(reserve_cards, base, draw, free_recycle, any_run, returns, auto_home, auto_talon, twins, start, states) "
     "-> search: the same search, not yet run, to be run by resume"},
    {"resume", sound_resume, METH_VARARGS,
     "resume(search, max_states, check_every, out_of_time) -> (status, states, line): search on from where the "
     "last resume stopped out of budget (status 2), as if it had not stopped"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "domain._sound", "The solver's sound-stage depth-first search in C (see domain/solver/search.py).", -1,
    methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__sound(void) {
    init_tables();
    return PyModule_Create(&module);
}
