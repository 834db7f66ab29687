/*
 * match_bench.c - match rate of the matching structures (p4e_match.c) as
 * the number of posted entries / unexpected headers grows.
 *
 * Structure level only: no NI, no transport, no events. Each posted entry
 * is a use-once receive: it is matched in the worst order for a linear
 * list (the entry that matches is the last one appended) and removed.
 * Appends happen between timed phases; a timed phase holds at least
 * P4E_BENCH_BATCH matches (several lists of one entry for the 1-entry
 * case) and the clock's own cost, measured at start, is subtracted. Time
 * is the thread's CPU time, so other processes on a busy machine do not
 * count (their cache pollution still does).
 *
 * Reported: the median of P4E_BENCH_RUNS runs in millions of matches per
 * second, the ratio to the 1-entry rate, and the entries examined per
 * lookup (the structure's counter). The "wildcards behind" pattern has no
 * 1-entry case of its own (1024 lists of 1k wildcards would measure
 * memory, not matching): its ratio is to the 1-entry rate of the same
 * receives without wildcards. Patterns follow Open MPI 4.1's mtl/ofi
 * receives: every receive ignores the synchronous-send bit; MPI_ANY_SOURCE
 * also ignores the source bits and uses match_id ANY.
 *
 * Usage: match_bench (the Markdown table), or match_bench mlist|uindex
 * PATTERN N for one case (profiling).
 */
#include <config.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "p4e_match.h"

#define P4E_BENCH_SYNC		0x100000000ULL
#define P4E_BENCH_SRC_SHIFT	33
#define P4E_BENCH_SRC_MASK	(0x7fffULL << P4E_BENCH_SRC_SHIFT)
#define P4E_BENCH_NSRC		64
#define P4E_BENCH_NWILD		1024
#define P4E_BENCH_RUNS		9
#define P4E_BENCH_BATCH		1024
#define P4E_BENCH_PER_RUN	(1024 * 1024)	/* matches per run, at least */

enum p4e_bench_pat {
	P4E_BENCH_EXACT,	/* ignore 0 */
	P4E_BENCH_OMPI,		/* ignore the sync bit on every receive */
	P4E_BENCH_OMPI_ANY,	/* that, with 10% MPI_ANY_SOURCE */
	P4E_BENCH_BEHIND,	/* that, with 1k full wildcards posted after */
	P4E_BENCH_WILD,		/* full wildcards only: the head matches */
	P4E_BENCH_NPATS
};

static const char *const p4e_bench_names[P4E_BENCH_NPATS] = {
	[P4E_BENCH_EXACT] = "ignore 0",
	[P4E_BENCH_OMPI] = "Open MPI (ignore sync bit)",
	[P4E_BENCH_OMPI_ANY] = "Open MPI + 10% ANY_SOURCE",
	[P4E_BENCH_BEHIND] = "Open MPI + 1k wildcards behind",
	[P4E_BENCH_WILD] = "full wildcards (ignore ~0, ANY)",
};

static const size_t p4e_bench_sizes[] = { 1, 1024, 16384, 65536 };
#define P4E_BENCH_NSIZES	P4U_ARRAY_SIZE(p4e_bench_sizes)

struct p4e_bench_result {
	double rate;		/* matches per second, median */
	double examined;	/* entries examined per lookup */
	bool valid;
};

static double p4e_bench_clock_cost;	/* of a pair of readings, seconds */

static double p4e_bench_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void p4e_bench_clock_calibrate(void)
{
	double t0, t1, best = 1;
	int i;

	for (i = 0; i < 1000; i++) {
		t0 = p4e_bench_now();
		t1 = p4e_bench_now();
		if (t1 - t0 < best)
			best = t1 - t0;
	}
	p4e_bench_clock_cost = best;
}

static int p4e_bench_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

static double p4e_bench_median(double *v, size_t n)
{
	qsort(v, n, sizeof(*v), p4e_bench_cmp_double);
	return v[n / 2];
}

static uint32_t p4e_bench_src(size_t i)
{
	return (uint32_t)(i % P4E_BENCH_NSRC);
}

static uint64_t p4e_bench_bits(size_t tag, uint32_t src)
{
	return (uint64_t)tag | ((uint64_t)src << P4E_BENCH_SRC_SHIFT);
}

static bool p4e_bench_is_any(enum p4e_bench_pat pat, size_t i)
{
	return (pat == P4E_BENCH_OMPI_ANY || pat == P4E_BENCH_BEHIND) &&
	       i % 10 == 3;
}

/* The match fields of receive i: its entry, and the find of a header. */
static void p4e_bench_recv(enum p4e_bench_pat pat, size_t i,
			   uint64_t *bits_p, uint64_t *ignore_p,
			   uint32_t *id_p)
{
	*bits_p = p4e_bench_bits(i, p4e_bench_src(i));
	*ignore_p = pat == P4E_BENCH_EXACT ? 0 : P4E_BENCH_SYNC;
	*id_p = p4e_bench_src(i);
	if (p4e_bench_is_any(pat, i)) {
		*bits_p = p4e_bench_bits(i, 0);
		*ignore_p = P4E_BENCH_SYNC | P4E_BENCH_SRC_MASK;
		*id_p = P4E_ID_ANY;
	} else if (pat == P4E_BENCH_WILD) {
		*bits_p = 0;
		*ignore_p = UINT64_MAX;
		*id_p = P4E_ID_ANY;
	}
}

/* The message that receive i waits for: half of them synchronous. */
static void p4e_bench_msg(enum p4e_bench_pat pat, size_t i,
			  uint64_t *bits_p, uint32_t *src_p)
{
	uint32_t src = p4e_bench_src(i);

	if (p4e_bench_is_any(pat, i))
		src = (uint32_t)((i * 7) % P4E_BENCH_NSRC);
	*bits_p = p4e_bench_bits(i, src);
	if (pat != P4E_BENCH_EXACT && (i & 1))
		*bits_p |= P4E_BENCH_SYNC;
	*src_p = src;
}

/* ---- posted entries --------------------------------------------------- */

struct p4e_bench_ml {
	size_t nlists, n, stride;	/* stride: n + wildcards behind */
	struct p4e_mlist *lists;
	struct p4e_mentry *ents;	/* nlists * stride */
};

static void p4e_bench_ml_post(struct p4e_mlist *list,
			      struct p4e_mentry *entry,
			      enum p4e_bench_pat pat, size_t i)
{
	p4e_bench_recv(pat, i, &entry->match_bits, &entry->ignore_bits,
		       &entry->match_id);
	p4e_mlist_append(list, entry);
}

static void p4e_bench_ml_fill(struct p4e_bench_ml *ml,
			      enum p4e_bench_pat pat)
{
	struct p4e_mentry *ents;
	size_t l, i;

	for (l = 0; l < ml->nlists; l++) {
		ents = &ml->ents[l * ml->stride];
		for (i = 0; i < ml->n; i++)
			p4e_bench_ml_post(&ml->lists[l], &ents[i], pat, i);
		for (; i < ml->stride; i++)
			p4e_bench_ml_post(&ml->lists[l], &ents[i],
					  P4E_BENCH_WILD, i);
	}
}

/* One timed phase: match every entry, newest first; -1 on a wrong match. */
static double p4e_bench_ml_round(struct p4e_bench_ml *ml,
				 enum p4e_bench_pat pat)
{
	struct p4e_mentry *got, *want;
	double start, end;
	bool bad = false;
	uint64_t bits;
	size_t l, i;
	uint32_t src;

	p4e_bench_ml_fill(ml, pat);
	start = p4e_bench_now();
	for (i = ml->n; i-- > 0;) {
		p4e_bench_msg(pat, i, &bits, &src);
		for (l = 0; l < ml->nlists; l++) {
			/* wildcards only: the oldest, the head, wins */
			want = &ml->ents[l * ml->stride +
					 (pat == P4E_BENCH_WILD ?
					  ml->n - 1 - i : i)];
			got = p4e_mlist_match(&ml->lists[l], bits, src, NULL,
					      NULL);
			bad |= got != want;
			p4e_mlist_remove(&ml->lists[l], want);
		}
	}
	end = p4e_bench_now() - p4e_bench_clock_cost;
	for (l = 0; l < ml->nlists; l++)
		for (i = ml->n; i < ml->stride; i++)
			p4e_mlist_remove(&ml->lists[l],
					 &ml->ents[l * ml->stride + i]);
	if (bad)
		fprintf(stderr, "match_bench: a lookup found the wrong entry\n");
	return bad ? -1 : end - start;
}

/* ---- unexpected headers ----------------------------------------------- */

struct p4e_bench_ui {
	size_t nindexes, n;
	struct p4e_uindex *indexes;
	struct p4e_uentry *hdrs;	/* nindexes * n */
};

/* One timed phase: find every header, newest first, and remove it. */
static double p4e_bench_ui_round(struct p4e_bench_ui *ui,
				 enum p4e_bench_pat pat)
{
	struct p4e_uentry *got, *want;
	uint64_t bits, ignore;
	double start, end;
	bool bad = false;
	size_t l, i;
	uint32_t id;

	for (l = 0; l < ui->nindexes; l++) {
		for (i = 0; i < ui->n; i++) {
			p4e_bench_msg(pat, i, &bits, &id);
			p4e_uindex_insert(&ui->indexes[l],
					  &ui->hdrs[l * ui->n + i], bits, id);
		}
	}
	start = p4e_bench_now();
	for (i = ui->n; i-- > 0;) {
		p4e_bench_recv(pat, i, &bits, &ignore, &id);
		for (l = 0; l < ui->nindexes; l++) {
			want = &ui->hdrs[l * ui->n +
					 (pat == P4E_BENCH_WILD ?
					  ui->n - 1 - i : i)];
			got = p4e_uindex_find(&ui->indexes[l], bits, ignore,
					      id, NULL, NULL);
			bad |= got != want;
			p4e_uindex_remove(&ui->indexes[l], want);
		}
	}
	end = p4e_bench_now() - p4e_bench_clock_cost;
	if (bad)
		fprintf(stderr, "match_bench: a lookup found the wrong entry\n");
	return bad ? -1 : end - start;
}

/* ---- cells: one structure, pattern and size -------------------------- */

/*
 * The sizes of a row are set up together and take their runs in turn (run
 * r of every size before run r + 1 of any), so a change in the machine's
 * speed during the row (a shared VM's is large) falls on every size
 * alike instead of on whichever ran last.
 */
struct p4e_bench_cell {
	bool unexp;
	enum p4e_bench_pat pat;
	size_t n;
	struct p4e_bench_ml ml;
	struct p4e_bench_ui ui;
	size_t work, rounds;		/* matches (finds) per round; rounds */
	double rates[P4E_BENCH_RUNS];
	int ret;
};

static double p4e_bench_cell_round(struct p4e_bench_cell *cell)
{
	return cell->unexp ? p4e_bench_ui_round(&cell->ui, cell->pat) :
			     p4e_bench_ml_round(&cell->ml, cell->pat);
}

/* Allocate and warm up (which also builds the mask indexes, once);
 * cell->ret says whether it worked. p4e_bench_cell_result() frees the
 * cell either way. */
static void p4e_bench_cell_init(struct p4e_bench_cell *cell, bool unexp,
				enum p4e_bench_pat pat, size_t n)
{
	size_t nlists = n < P4E_BENCH_BATCH ? P4E_BENCH_BATCH / n : 1, l;
	struct p4e_bench_ml *ml = &cell->ml;
	struct p4e_bench_ui *ui = &cell->ui;

	memset(cell, 0, sizeof(*cell));
	cell->unexp = unexp;
	cell->pat = pat;
	cell->n = n;
	cell->work = nlists * n;
	cell->rounds = (P4E_BENCH_PER_RUN + cell->work - 1) / cell->work;
	cell->ret = -1;
	if (unexp) {
		ui->n = n;
		ui->nindexes = nlists;
		ui->indexes = calloc(nlists, sizeof(*ui->indexes));
		ui->hdrs = calloc(nlists * n, sizeof(*ui->hdrs));
		if (!ui->indexes || !ui->hdrs) {
			fprintf(stderr, "match_bench: out of memory\n");
			return;
		}
		for (l = 0; l < nlists; l++)
			p4e_uindex_init(&ui->indexes[l], true);
	} else {
		ml->n = n;
		ml->stride = n + (pat == P4E_BENCH_BEHIND ? P4E_BENCH_NWILD : 0);
		ml->nlists = nlists;
		ml->lists = calloc(nlists, sizeof(*ml->lists));
		ml->ents = calloc(nlists * ml->stride, sizeof(*ml->ents));
		if (!ml->lists || !ml->ents) {
			fprintf(stderr, "match_bench: out of memory\n");
			return;
		}
		for (l = 0; l < nlists; l++)
			p4e_mlist_init(&ml->lists[l], true);
	}
	if (p4e_bench_cell_round(cell) < 0)
		return;
	for (l = 0; l < nlists; l++) {
		if (unexp)
			ui->indexes[l].examined = 0;
		else
			ml->lists[l].examined = 0;
	}
	cell->ret = 0;
}

static void p4e_bench_cell_run(struct p4e_bench_cell *cell, size_t run)
{
	double elapsed, secs = 0;
	size_t r;

	for (r = 0; !cell->ret && r < cell->rounds; r++) {
		elapsed = p4e_bench_cell_round(cell);
		if (elapsed < 0) {
			cell->ret = -1;
			return;
		}
		secs += elapsed;
	}
	cell->rates[run] = (double)(cell->work * cell->rounds) / secs;
}

/* The median and entries examined per lookup into res; frees the cell
 * (also after a failed init). */
static int p4e_bench_cell_result(struct p4e_bench_cell *cell,
				 struct p4e_bench_result *res)
{
	uint64_t examined = 0;
	size_t l;

	memset(res, 0, sizeof(*res));
	for (l = 0; cell->unexp && cell->ui.indexes &&
		    l < cell->ui.nindexes; l++) {
		examined += cell->ui.indexes[l].examined;
		p4e_uindex_fini(&cell->ui.indexes[l]);
	}
	for (l = 0; !cell->unexp && cell->ml.lists &&
		    l < cell->ml.nlists; l++) {
		examined += cell->ml.lists[l].examined;
		p4e_mlist_fini(&cell->ml.lists[l]);
	}
	free(cell->ui.indexes);
	free(cell->ui.hdrs);
	free(cell->ml.lists);
	free(cell->ml.ents);
	if (cell->ret) {
		fprintf(stderr, "match_bench: %s%s, %zu: failed\n",
			cell->unexp ? "unexpected " : "",
			p4e_bench_names[cell->pat], cell->n);
		return cell->ret;
	}
	res->rate = p4e_bench_median(cell->rates, P4E_BENCH_RUNS);
	res->examined = (double)examined /
			(double)(cell->work * cell->rounds * P4E_BENCH_RUNS);
	res->valid = true;
	return 0;
}

/* The cells of sizes[0..nsizes-1] (0: skipped), interleaved run by run. */
static int p4e_bench_cells(bool unexp, enum p4e_bench_pat pat,
			   const size_t *sizes, size_t nsizes,
			   struct p4e_bench_result *res)
{
	struct p4e_bench_cell *cells;
	size_t s, run;
	int ret = 0;

	cells = calloc(nsizes, sizeof(*cells));
	if (!cells)
		return -1;
	for (s = 0; s < nsizes; s++)
		if (sizes[s])
			p4e_bench_cell_init(&cells[s], unexp, pat, sizes[s]);
	for (run = 0; run < P4E_BENCH_RUNS; run++)
		for (s = 0; s < nsizes; s++)
			if (sizes[s] && !cells[s].ret)
				p4e_bench_cell_run(&cells[s], run);
	for (s = 0; s < nsizes; s++)
		if (sizes[s])
			ret |= p4e_bench_cell_result(&cells[s], &res[s]);
	free(cells);
	return ret;
}

/* ---- report ----------------------------------------------------------- */

/* base: the 1-entry rate the ratios are to. */
static void p4e_bench_row(const char *what, enum p4e_bench_pat pat,
			  const struct p4e_bench_result *res, double base)
{
	size_t s;

	printf("| %s | %s |", what, p4e_bench_names[pat]);
	for (s = 0; s < P4E_BENCH_NSIZES; s++) {
		if (!res[s].valid)
			printf(" – |");
		else
			printf(" %.1f (%.2f) [%.2f] |", res[s].rate / 1e6,
			       res[s].rate / base, res[s].examined);
	}
	printf("\n");
	fflush(stdout);
}

/* One case, for profiling: match_bench mlist|uindex PATTERN N. */
static int p4e_bench_one(char **argv)
{
	struct p4e_bench_result res = { 0 };
	int pat = atoi(argv[2]), ret;
	size_t n = strtoul(argv[3], NULL, 0);

	if (pat < 0 || pat >= P4E_BENCH_NPATS || !n)
		return EXIT_FAILURE;
	ret = p4e_bench_cells(!strcmp(argv[1], "uindex"), pat, &n, 1, &res);
	printf("%s, %zu: %.1f M/s [%.2f examined]\n", p4e_bench_names[pat],
	       n, res.rate / 1e6, res.examined);
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}

int main(int argc, char **argv)
{
	struct p4e_bench_result res[2][P4E_BENCH_NPATS][P4E_BENCH_NSIZES];
	struct p4e_bench_result *row;
	size_t sizes[P4E_BENCH_NSIZES];
	int pat, ret = 0;
	size_t s;

	p4e_bench_clock_calibrate();
	if (argc == 4)
		return p4e_bench_one(argv);
	memset(res, 0, sizeof(res));
	printf("Matches per second (millions), median of %d runs; "
	       "(ratio to 1 entry) [entries examined per lookup].\n"
	       "Worst order: the matching entry is the newest; each match "
	       "removes it.\n\n| structure | pattern |", P4E_BENCH_RUNS);
	for (s = 0; s < P4E_BENCH_NSIZES; s++)
		printf(" %zu |", p4e_bench_sizes[s]);
	printf("\n|---|---|");
	for (s = 0; s < P4E_BENCH_NSIZES; s++)
		printf("---|");
	printf("\n");

	for (pat = 0; pat < P4E_BENCH_NPATS; pat++) {
		for (s = 0; s < P4E_BENCH_NSIZES; s++)
			sizes[s] = pat == P4E_BENCH_BEHIND && s == 0 ? 0 :
				   p4e_bench_sizes[s];
		row = res[0][pat];
		ret |= p4e_bench_cells(false, pat, sizes, P4E_BENCH_NSIZES,
				       row);
		p4e_bench_row("posted entries", pat, row,
			      res[0][pat == P4E_BENCH_BEHIND ?
				     P4E_BENCH_OMPI : pat][0].rate);
	}
	for (pat = 0; pat < P4E_BENCH_NPATS; pat++) {
		if (pat == P4E_BENCH_BEHIND)
			continue;
		for (s = 0; s < P4E_BENCH_NSIZES; s++)
			sizes[s] = p4e_bench_sizes[s] == 16384 ? 0 :
				   p4e_bench_sizes[s];
		row = res[1][pat];
		ret |= p4e_bench_cells(true, pat, sizes, P4E_BENCH_NSIZES,
				       row);
		p4e_bench_row("unexpected headers", pat, row, row[0].rate);
	}

	/* issue 3's target is the engine's (eng_bench): here a lookup at 1
	 * entry runs from L1, so the ratio is mostly the memory hierarchy */
	printf("\nStructure alone, rate at 64k / rate at 1 (first three "
	       "patterns):");
	for (pat = P4E_BENCH_EXACT; pat <= P4E_BENCH_OMPI_ANY; pat++) {
		row = res[0][pat];
		if (row[0].valid && row[P4E_BENCH_NSIZES - 1].valid)
			printf(" %.2f", row[P4E_BENCH_NSIZES - 1].rate /
					row[0].rate);
		else
			printf(" -");
	}
	printf(".\nAt 1 entry everything is in L1 and a lookup takes about "
	       "13 ns, so one cache miss more halves the rate; here 64\n"
	       "sources take turns, so consecutive lookups share no run of "
	       "tags and each reads a random bucket.\nThe target is "
	       "eng_bench's, through the whole engine.\n");
	return ret ? EXIT_FAILURE : EXIT_SUCCESS;
}
