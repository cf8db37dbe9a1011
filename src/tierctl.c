// SPDX-License-Identifier: MIT
/*
 * tierctl: watch and steer a mounted tierfs through its control channel.
 * One function per command; each returns the exit status.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <pwd.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <jansson.h>

#include "tierfs/clock.h"
#include "tierfs/ctl.h"
#include "tierfs/options.h"
#include "tierfs/pagemap.h"

enum {
	EXIT_REFUSED = 1,	/* the daemon refused, or the request failed */
	EXIT_USAGE = 2,		/* wrong arguments */
	EXIT_NOT_TIERFS = 3,	/* the path is on no tierfs mount */
	EXIT_NO_ANSWER = 4,	/* a tierfs mount whose daemon did not answer in time */
	EXIT_INTERRUPTED = 130, /* drain stopped by SIGINT or SIGTERM */
};

#define EXIT_STATUS_HELP                                                                 \
	"exit status: 0 ok, 1 the daemon refused or the request failed, 2 usage,\n"      \
	"             3 not a tierfs mount, 4 daemon not answering (stopped, dead, or\n" \
	"             slower than --timeout), 130 drain interrupted\n"

struct command {
	const char *name;
	int (*run)(const char *mnt, int argc, char **argv); /* mnt NULL: no_mount */
	const char *synopsis;
	const char *help;
	bool has_no_mount;		  /* it takes no MOUNTPOINT */
	void (*print_more_help)(FILE *f); /* after help, or NULL */
};

static char reply[CTL_REPLY_MAX];
static int timeout_ms = CTL_TIMEOUT_MS;	 /* --timeout, for each exchange */
static volatile sig_atomic_t nr_signals; /* SIGINT and SIGTERM seen by drain */

static void on_signal(int sig)
{
	(void)sig;
	nr_signals++;
}

/*
 * Send request and leave the reply body in reply.  Returns 0, or prints why
 * not and returns the exit status.  A signal can cut the exchange short
 * (drain installs handlers without SA_RESTART): then it is sent again,
 * which is why only requests that may be repeated are sent while they are
 * installed.
 */
static int ask(const char *mnt, const char *request)
{
	sig_atomic_t seen;
	int err;

	do {
		seen = nr_signals;
		err = ctl_request_timeout(mnt, request, timeout_ms, reply, sizeof(reply));
	} while (err && seen != nr_signals);
	switch (err) {
	case 0:
		return 0;
	case -ENOTCONN:
		fprintf(stderr, "tierctl: %s: not a tierfs mount\n", mnt);
		return EXIT_NOT_TIERFS;
	case -ETIMEDOUT:
		fprintf(stderr,
			"tierctl: %s: daemon not answering (no reply within %d.%01d s; stopped or "
			"dead?)\n",
			mnt, timeout_ms / 1000, timeout_ms % 1000 / 100);
		return EXIT_NO_ANSWER;
	case -ECONNREFUSED:
		fprintf(stderr, "tierctl: %s: daemon not answering (none listens: killed?)\n", mnt);
		return EXIT_NO_ANSWER;
	case -ENOENT:
	case -ENOTDIR:
		fprintf(stderr, "tierctl: %s: %s\n", mnt, strerror(-err));
		return EXIT_NOT_TIERFS;
	case -EPROTO:
		if (!reply[0])
			fprintf(stderr,
				"tierctl: %s: the daemon closed the connection without a reply\n",
				mnt);
		else
			fprintf(stderr, "tierctl: %s: %s\n", mnt, reply);
		return EXIT_REFUSED;
	default:
		fprintf(stderr, "tierctl: %s: %s\n", mnt, strerror(-err));
		return EXIT_REFUSED;
	}
}

/*
 * "VERB ARG ARG ..." into out.  The daemon splits at spaces and stops at a
 * newline, so an argument holding either would be misread: refuse it.
 */
static bool join_request(char *out, size_t size, const char *verb, int argc, char **argv)
{
	size_t len = (size_t)snprintf(out, size, "%s", verb);

	for (int i = 0; i < argc; i++) {
		if (!argv[i][0] || strpbrk(argv[i], " \t\n\r")) {
			fprintf(stderr, "tierctl: %s: bad argument '%s'\n", verb, argv[i]);
			return false;
		}
		len += (size_t)snprintf(out + len, len < size ? size - len : 0, " %s", argv[i]);
	}
	if (len >= size) {
		fprintf(stderr, "tierctl: %s: request too long\n", verb);
		return false;
	}
	return true;
}

static int cmd_stats(const char *mnt, int argc, char **argv)
{
	char request[CTL_REQUEST_MAX], where[CTL_PATH_MAX];
	const char *format = NULL;
	int ret;

	for (int i = 0; i < argc; i++) {
		const char *f = !strcmp(argv[i], "--json")			      ? "json" :
				!strcmp(argv[i], "--bytes") || !strcmp(argv[i], "-b") ? "bytes" :
				!strcmp(argv[i], "--prometheus") ? "prometheus" :
								   NULL;

		if (!f) {
			fprintf(stderr, "tierctl: stats: unknown argument '%s'\n", argv[i]);
			return EXIT_USAGE;
		}
		if (format && strcmp(format, f)) {
			fprintf(stderr, "tierctl: stats: --%s and --%s do not go together\n",
				format, f);
			return EXIT_USAGE;
		}
		format = f;
	}
	snprintf(request, sizeof(request), "stats%s%s", format ? " " : "", format ? format : "");
	if (format && !strcmp(format, "prometheus")) {
		/* The label is the mount point as mountinfo has it, whatever path named it. */
		ret = ctl_mount_path(mnt, where);
		if (ret) {
			fprintf(stderr, "tierctl: %s: %s\n", mnt, strerror(-ret));
			return EXIT_NOT_TIERFS;
		}
		if (strchr(where, '\n') ||
		    (size_t)snprintf(request, sizeof(request), "stats prometheus %s", where) >=
			    sizeof(request)) {
			fprintf(stderr, "tierctl: %s: a mount point no label can carry\n", mnt);
			return EXIT_USAGE;
		}
	}
	ret = ask(mnt, request);
	if (!ret)
		fputs(reply, stdout);
	return ret;
}

static int cmd_reclaim(const char *mnt, int argc, char **argv)
{
	char request[CTL_REQUEST_MAX], size[32];
	bool is_raw = false;
	char *what = NULL;
	uint64_t freed;
	int ret;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--bytes") || !strcmp(argv[i], "-b")) {
			is_raw = true;
		} else if (!what) {
			what = argv[i];
		} else {
			what = NULL;
			break;
		}
	}
	if (!what) {
		fprintf(stderr, "tierctl: reclaim: want one SIZE or 'all'\n");
		return EXIT_USAGE;
	}
	if (!join_request(request, sizeof(request), "reclaim", 1, &what))
		return EXIT_USAGE;
	ret = ask(mnt, request);
	if (ret)
		return ret;
	if (sscanf(reply, "reclaimed %" SCNu64 " bytes", &freed) != 1) {
		fputs(reply, stdout);
		return 0;
	}
	if (is_raw)
		snprintf(size, sizeof(size), "%" PRIu64 " bytes", freed);
	else
		ctl_format_bytes(freed, size, sizeof(size));
	printf("reclaimed %s\n", size);
	return 0;
}

static int cmd_reset_peaks(const char *mnt, int argc, char **argv)
{
	int ret;

	if (argc) {
		fprintf(stderr, "tierctl: reset-peaks: unknown argument '%s'\n", argv[0]);
		return EXIT_USAGE;
	}
	ret = ask(mnt, "reset-peaks");
	if (!ret)
		fputs(reply, stdout);
	return ret;
}

/* What a list column shows, and where the stats JSON has it. */
enum column_kind { COL_PATH, COL_OWNER, COL_BYTES, COL_RATIO, COL_COUNT, COL_STRING, COL_NODES };

struct list_column {
	const char *name;  /* the header, and its --output name */
	const char *group; /* the JSON object it is in; NULL: the top */
	const char *key;
	enum column_kind kind;
	const char *help;
};

static const struct list_column list_columns[] = {
	{ "MOUNTPOINT", NULL, NULL, COL_PATH, "where it is mounted" },
	{ "SIZE", NULL, "size_bytes", COL_BYTES, "size=, the cap on file data (0: none)" },
	{ "DATA", NULL, "data_bytes", COL_BYTES, "file data held, resident or swapped" },
	{ "RESIDENT", NULL, "resident_bytes", COL_BYTES, "file data in the daemon's memory" },
	{ "BUDGET", NULL, "mem_budget_bytes", COL_BYTES, "the resident budget" },
	{ "STORED", "backend", "stored_bytes", COL_BYTES, "file data in the backend" },
	{ "POOL", "backend", "pool_bytes", COL_BYTES, "memory or disk the backend uses for it" },
	{ "RATIO", "backend", "compression_ratio", COL_RATIO,
	  "STORED / POOL of a compressor ('-': nothing stored)" },
	{ "FOOTPRINT", NULL, "footprint_bytes", COL_BYTES,
	  "all the daemon's memory: pages, pool, metadata" },
	{ "COMPRESSOR", "backend", "compressor", COL_STRING, "the compressor, if any" },
	{ "BACKEND", "backend", "name", COL_STRING, "backend=" },
	{ "TRANSPORT", "transport", "mode", COL_STRING, "classic /dev/fuse or uring" },
	/* Not shown unless asked for. */
	{ "FREE", NULL, "free_bytes", COL_BYTES, "what more df says fits" },
	{ "ZERO-PAGES", NULL, "same_filled_pages", COL_COUNT,
	  "pages of one repeated word, held as that word" },
	{ "PEAK", NULL, "footprint_peak_bytes", COL_BYTES, "the footprint's peak" },
	{ "POOLPEAK", "backend", "pool_peak_bytes", COL_BYTES, "the backend's peak" },
	{ "INODES", NULL, "inodes", COL_COUNT, "inodes in use" },
	{ "CACHE", "cache", "mode", COL_STRING, "cache=" },
	{ "READAHEAD", "readahead", "policy", COL_STRING, "the readahead policy in force" },
	{ "OWNER", NULL, NULL, COL_OWNER, "who mounted it, whom the daemon runs as" },
	/* A remote backend's servers, backend.nodes[]: up/known; --json gives them all. */
	{ "NODES", "backend", "nodes", COL_NODES, "servers up / known (redis)" },
	{ "NODEP99", "backend", "latency_p99_us", COL_NODES,
	  "slowest server's p99 round trip, us" },
	{ "NODEERR", "backend", "errors", COL_NODES, "servers' errors, all told" },
};

#define NR_LIST_COLUMNS (sizeof(list_columns) / sizeof(list_columns[0]))
#define NR_DEFAULT_COLUMNS 12

/* One mount's row: its stats, or why there are none. */
struct list_row {
	const struct ctl_mount_point *mp;
	char request[CTL_REQUEST_MAX];
	pthread_t thread;
	bool is_started;
	int err;       /* of ctl_request_timeout() */
	char *reply;   /* CTL_REPLY_MAX */
	json_t *stats; /* NULL: none */
};

static void *ask_row(void *arg)
{
	struct list_row *row = arg;

	row->err = ctl_request_timeout(row->mp->path, row->request, timeout_ms, row->reply,
				       CTL_REPLY_MAX);
	return NULL;
}

/*
 * Every tierfs mount of the namespace, each asked request (NULL: "stats
 * PROMETHEUS-LABEL") at once, so that one that does not answer costs the
 * timeout once.  Returns the rows (free with free_rows()) or NULL, having
 * said why.
 */
static struct list_row *ask_every_mount(const char *request, unsigned int *nr)
{
	struct ctl_mount_point *mps;
	struct list_row *rows;
	int err;

	err = ctl_list_mounts(&mps, nr);
	if (err) {
		fprintf(stderr, "tierctl: /proc/self/mountinfo: %s\n", strerror(-err));
		return NULL;
	}
	rows = calloc(*nr + 1, sizeof(*rows));
	if (!rows) {
		free(mps);
		fprintf(stderr, "tierctl: out of memory\n");
		return NULL;
	}
	rows[0].mp = mps; /* for free_rows(), with no mount too */
	for (unsigned int r = 0; r < *nr; r++) {
		rows[r].mp = &mps[r];
		rows[r].reply = malloc(CTL_REPLY_MAX);
		rows[r].err = -ENOMEM;
		/* The Prometheus label is the mount point as mountinfo has it. */
		if (request)
			snprintf(rows[r].request, sizeof(rows[r].request), "%s", request);
		else if (strchr(mps[r].path, '\n') ||
			 (size_t)snprintf(rows[r].request, sizeof(rows[r].request),
					  "stats prometheus %s",
					  mps[r].path) >= sizeof(rows[r].request))
			rows[r].err = -ENAMETOOLONG;
		if (rows[r].reply && rows[r].err == -ENOMEM)
			rows[r].is_started =
				!pthread_create(&rows[r].thread, NULL, ask_row, &rows[r]);
		if (rows[r].reply && !rows[r].is_started)
			ask_row(&rows[r]);
	}
	for (unsigned int r = 0; r < *nr; r++)
		if (rows[r].is_started)
			pthread_join(rows[r].thread, NULL);
	return rows;
}

/* Why a row has no reply, on stderr. */
static void say_no_reply(const struct list_row *row, const char *why)
{
	fprintf(stderr, "tierctl: %s: %s\n", row->mp->path,
		row->err == -ETIMEDOUT || row->err == -ECONNREFUSED ? "daemon not answering" :
		row->err					    ? strerror(-row->err) :
								      why);
}

static void free_rows(struct list_row *rows, unsigned int nr)
{
	for (unsigned int r = 0; r < nr; r++) {
		json_decref(rows[r].stats);
		free(rows[r].reply);
	}
	free((void *)rows[0].mp);
	free(rows);
}

/*
 * --output COL,COL,... into cols, or +COL,... after the columns already
 * there (the defaults), as zramctl takes them; false, having said why, on
 * a wrong one.
 */
static bool parse_columns(const char *spec, const struct list_column **cols, size_t *nr)
{
	char copy[1024], *save = NULL;

	if (strlen(spec) >= sizeof(copy)) {
		fprintf(stderr, "tierctl: list: --output too long\n");
		return false;
	}
	if (*spec == '+')
		spec++;
	else
		*nr = 0;
	strcpy(copy, spec);
	for (char *name = strtok_r(copy, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
		const struct list_column *col = NULL;

		for (size_t i = 0; i < NR_LIST_COLUMNS; i++)
			if (!strcasecmp(name, list_columns[i].name))
				col = &list_columns[i];
		if (!col || *nr == NR_LIST_COLUMNS) {
			fprintf(stderr, "tierctl: list: --output: unknown column '%s'\n", name);
			return false;
		}
		cols[(*nr)++] = col;
	}
	if (!*nr) {
		fprintf(stderr, "tierctl: list: --output: want at least one column\n");
		return false;
	}
	return true;
}

/* The column's value in a row's stats; NULL when it has none. */
static json_t *column_value(const struct list_row *row, const struct list_column *col)
{
	json_t *obj = row->stats;

	if (obj && col->group)
		obj = json_object_get(obj, col->group);
	return obj && col->key ? json_object_get(obj, col->key) : NULL;
}

/*
 * A COL_NODES cell over backend.nodes[]: for "nodes" how many are up (and
 * *known how many there are), else the largest (latency) or the sum of key.
 * False when the backend has no servers.
 */
static bool nodes_value(const struct list_row *row, const struct list_column *col, uint64_t *v,
			uint64_t *known)
{
	json_t *backend = row->stats ? json_object_get(row->stats, "backend") : NULL;
	json_t *nodes = backend ? json_object_get(backend, "nodes") : NULL, *node;
	bool is_max = strstr(col->key, "latency") != NULL;
	size_t i;

	if (!json_is_array(nodes) || !json_array_size(nodes))
		return false;
	*v = 0;
	*known = json_array_size(nodes);
	json_array_foreach(nodes, i, node)
	{
		json_t *x = json_object_get(node, col->key);
		uint64_t n = json_is_integer(x) ? (uint64_t)json_integer_value(x) : 0;

		if (!strcmp(col->key, "nodes"))
			*v += !json_is_string(json_object_get(node, "state")) ||
			      strcmp(json_string_value(json_object_get(node, "state")), "down");
		else if (is_max)
			*v = n > *v ? n : *v;
		else
			*v += n;
	}
	return true;
}

/* The text of a cell; "-" where the daemon gave no such value. */
static void column_text(const struct list_row *row, const struct list_column *col, bool is_raw,
			char *out, size_t size)
{
	json_t *v = column_value(row, col);
	uint64_t n, known;
	struct passwd *pw;

	switch (col->kind) {
	case COL_NODES:
		if (!nodes_value(row, col, &n, &known))
			break;
		if (!strcmp(col->key, "nodes"))
			snprintf(out, size, "%" PRIu64 "/%" PRIu64, n, known);
		else
			snprintf(out, size, "%" PRIu64, n);
		return;
	case COL_PATH:
		ctl_escape(row->mp->path, true, out, size);
		return;
	case COL_OWNER:
		pw = getpwuid(row->mp->mount.owner);
		if (pw)
			ctl_escape(pw->pw_name, true, out, size);
		else
			snprintf(out, size, "%u", (unsigned int)row->mp->mount.owner);
		return;
	case COL_BYTES:
		if (!json_is_integer(v))
			break;
		if (is_raw)
			snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		else
			ctl_format_bytes((uint64_t)json_integer_value(v), out, size);
		return;
	case COL_COUNT:
		if (!json_is_integer(v))
			break;
		snprintf(out, size, "%" JSON_INTEGER_FORMAT, json_integer_value(v));
		return;
	case COL_RATIO:
		if (!json_is_number(v))
			break;
		snprintf(out, size, "%.2f", json_number_value(v));
		return;
	case COL_STRING:
		if (!json_is_string(v))
			break;
		ctl_escape(json_string_value(v), true, out, size);
		return;
	}
	snprintf(out, size, "-");
}

/* The JSON of a cell, for --json: numbers as numbers, bytes raw. */
static json_t *column_json(const struct list_row *row, const struct list_column *col)
{
	json_t *v = column_value(row, col);
	uint64_t n, known;

	switch (col->kind) {
	case COL_NODES:
		if (!strcmp(col->key, "nodes"))
			return json_is_array(v) ? json_incref(v) : json_null();
		return nodes_value(row, col, &n, &known) ? json_integer((json_int_t)n) :
							   json_null();
	case COL_PATH:
		return json_string(row->mp->path);
	case COL_OWNER:
		return json_integer(row->mp->mount.owner);
	case COL_BYTES:
	case COL_COUNT:
		return json_is_integer(v) ? json_incref(v) : json_null();
	case COL_RATIO:
		return json_is_number(v) ? json_incref(v) : json_null();
	case COL_STRING:
		return json_is_string(v) ? json_incref(v) : json_null();
	}
	return json_null();
}

static int print_list_json(const struct list_row *rows, unsigned int nr,
			   const struct list_column **cols, size_t nr_cols)
{
	json_t *root = json_object(), *mounts = json_array();
	char name[32];
	int ret = EXIT_REFUSED;

	if (!root || !mounts || json_object_set(root, "mounts", mounts))
		goto out;
	for (unsigned int r = 0; r < nr; r++) {
		json_t *obj = json_object();

		if (!obj || json_array_append_new(mounts, obj))
			goto out;
		for (size_t c = 0; c < nr_cols; c++) {
			size_t i;

			for (i = 0; cols[c]->name[i] && i + 1 < sizeof(name); i++)
				name[i] = (char)tolower((unsigned char)cols[c]->name[i]);
			name[i] = '\0';
			json_object_set_new(obj, name, column_json(&rows[r], cols[c]));
		}
		if (!rows[r].stats)
			json_object_set_new(obj, "error", json_string("daemon not answering"));
	}
	if (json_dumpf(root, stdout, JSON_INDENT(2) | JSON_REAL_PRECISION(6)) == 0) {
		putchar('\n');
		ret = 0;
	}
out:
	json_decref(mounts);
	json_decref(root);
	if (ret)
		fprintf(stderr, "tierctl: list: out of memory\n");
	return ret;
}

/*
 * Aligned columns, or with is_unaligned (--raw) one space between cells,
 * for scripts to split, as zramctl --raw.
 */
static void print_list_text(const struct list_row *rows, unsigned int nr,
			    const struct list_column **cols, size_t nr_cols, bool is_raw,
			    bool is_unaligned, bool has_headings)
{
	enum { CELL_MAX = 4 * 4096 + 1 };
	static char cell[CELL_MAX];
	int width[NR_LIST_COLUMNS];

	for (size_t c = 0; c < nr_cols; c++) {
		width[c] = (int)strlen(cols[c]->name);
		for (unsigned int r = 0; r < nr; r++) {
			column_text(&rows[r], cols[c], is_raw, cell, sizeof(cell));
			if ((int)strlen(cell) > width[c])
				width[c] = (int)strlen(cell);
		}
	}
	/* Text left, numbers right, as zramctl; the last column unpadded. */
	for (int r = has_headings ? -1 : 0; r < (int)nr; r++) {
		for (size_t c = 0; c < nr_cols; c++) {
			bool is_left = cols[c]->kind == COL_PATH || cols[c]->kind == COL_OWNER ||
				       cols[c]->kind == COL_STRING;
			bool is_last = c + 1 == nr_cols;

			if (r < 0)
				snprintf(cell, sizeof(cell), "%s", cols[c]->name);
			else
				column_text(&rows[r], cols[c], is_raw, cell, sizeof(cell));
			/* "1.0 GiB" as "1.0GiB": a cell is one word. */
			if (is_unaligned && cols[c]->kind == COL_BYTES && strchr(cell, ' '))
				memmove(strchr(cell, ' '), strchr(cell, ' ') + 1,
					strlen(strchr(cell, ' ')));
			if (is_unaligned)
				printf("%s%s", c ? " " : "", cell);
			else
				printf("%s%*s", c ? " " : "",
				       is_left ? (is_last ? 0 : -width[c]) : width[c], cell);
		}
		putchar('\n');
	}
}

static void print_columns(FILE *f)
{
	fputs("  columns (the first twelve by default):\n", f);
	for (size_t i = 0; i < NR_LIST_COLUMNS; i++)
		fprintf(f, "    %-11s %s\n", list_columns[i].name, list_columns[i].help);
}

static int cmd_list(const char *mnt, int argc, char **argv)
{
	const struct list_column *cols[NR_LIST_COLUMNS];
	bool is_json = false, is_raw = false, is_unaligned = false, has_headings = true;
	struct list_row *rows;
	size_t nr_cols = NR_DEFAULT_COLUMNS;
	unsigned int nr;
	int ret = 0, err;

	(void)mnt;
	for (size_t i = 0; i < NR_DEFAULT_COLUMNS; i++)
		cols[i] = &list_columns[i];
	for (int i = 0; i < argc; i++) {
		const char *spec = NULL;

		if (!strcmp(argv[i], "--json"))
			is_json = true;
		else if (!strcmp(argv[i], "--bytes") || !strcmp(argv[i], "-b"))
			is_raw = true;
		else if (!strcmp(argv[i], "--noheadings") || !strcmp(argv[i], "-n"))
			has_headings = false;
		else if (!strcmp(argv[i], "--raw") || !strcmp(argv[i], "-r"))
			is_unaligned = true;
		else if (!strcmp(argv[i], "--output-all"))
			for (nr_cols = 0; nr_cols < NR_LIST_COLUMNS; nr_cols++)
				cols[nr_cols] = &list_columns[nr_cols];
		else if ((!strcmp(argv[i], "--output") || !strcmp(argv[i], "-o")) && i + 1 < argc)
			spec = argv[++i];
		else if (!strncmp(argv[i], "--output=", 9))
			spec = argv[i] + 9;
		else {
			fprintf(stderr, "tierctl: list: unknown argument '%s'\n", argv[i]);
			return EXIT_USAGE;
		}
		if (spec && !parse_columns(spec, cols, &nr_cols))
			return EXIT_USAGE;
	}
	rows = ask_every_mount("stats json", &nr);
	if (!rows)
		return EXIT_REFUSED;
	for (unsigned int r = 0; r < nr; r++) {
		if (!rows[r].err)
			rows[r].stats = json_loads(rows[r].reply, 0, NULL);
		if (!rows[r].stats) {
			say_no_reply(&rows[r], "stats that are no JSON object");
			ret = EXIT_NO_ANSWER;
		}
	}
	if (is_json) {
		err = print_list_json(rows, nr, cols, nr_cols);
		ret = err ? err : ret;
	} else if (nr) {
		print_list_text(rows, nr, cols, nr_cols, is_raw, is_unaligned, has_headings);
	}
	free_rows(rows, nr);
	return ret;
}

/* A Prometheus family of stats --all: its HELP and TYPE once, every mount's samples. */
struct prom_family {
	char *head;    /* "# HELP ...\n# TYPE ...\n" */
	char *samples; /* lines */
	size_t len, cap;
};

static struct prom_family *family_of(struct prom_family **all, size_t *nr, const char *name,
				     size_t name_len)
{
	struct prom_family *f;

	for (size_t i = 0; i < *nr; i++) {
		const char *head = (*all)[i].head + 7; /* after "# HELP " */

		if (!strncmp(head, name, name_len) && head[name_len] == ' ')
			return &(*all)[i];
	}
	f = realloc(*all, (*nr + 1) * sizeof(**all));
	if (!f)
		return NULL;
	*all = f;
	f = &f[(*nr)++];
	*f = (struct prom_family){ 0 };
	return f;
}

static bool append(struct prom_family *f, const char *line, size_t len)
{
	if (f->len + len + 1 > f->cap) {
		size_t cap = (f->len + len + 1) * 2;
		char *p = realloc(f->samples, cap);

		if (!p)
			return false;
		f->samples = p;
		f->cap = cap;
	}
	memcpy(f->samples + f->len, line, len);
	f->len += len;
	f->samples[f->len] = '\0';
	return true;
}

/*
 * A daemon's Prometheus text into families: a HELP line starts (or finds)
 * one, its TYPE line is kept with it, samples go to the family last
 * started.  False when out of memory.
 */
static bool take_families(const char *text, struct prom_family **all, size_t *nr)
{
	struct prom_family *f = NULL;

	for (const char *line = text, *next; *line; line = next) {
		size_t len;

		next = line + strcspn(line, "\n");
		next += *next == '\n';
		len = (size_t)(next - line);
		if (!strncmp(line, "# HELP ", 7)) {
			const char *name = line + 7;

			f = family_of(all, nr, name, strcspn(name, " \n"));
			if (!f)
				return false;
			if (!f->head) {
				const char *type = next + strcspn(next, "\n");

				type += *type == '\n';
				f->head = strndup(line, (size_t)(type - line));
				if (!f->head)
					return false;
			}
		} else if (line[0] != '#' && f && !append(f, line, len)) {
			return false;
		}
	}
	return true;
}

/*
 * stats --all --prometheus: one scrape for every mount, each family once
 * with every mount's samples, as the text format wants (a family's HELP
 * and TYPE twice is an error to promtool and to Prometheus).
 */
static int cmd_stats_all(int argc, char **argv)
{
	struct prom_family *families = NULL;
	bool is_prometheus = false;
	size_t nr_families = 0;
	struct list_row *rows;
	unsigned int nr;
	int ret = 0;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--prometheus")) {
			is_prometheus = true;
		} else if (strcmp(argv[i], "--all")) {
			fprintf(stderr, "tierctl: stats --all: unknown argument '%s'\n", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!is_prometheus) {
		fprintf(stderr, "tierctl: stats --all goes with --prometheus (for the rest: "
				"tierctl list --json)\n");
		return EXIT_USAGE;
	}
	rows = ask_every_mount(NULL, &nr);
	if (!rows)
		return EXIT_REFUSED;
	for (unsigned int r = 0; r < nr; r++) {
		if (rows[r].err) {
			say_no_reply(&rows[r], "");
			ret = EXIT_NO_ANSWER;
		} else if (!take_families(rows[r].reply, &families, &nr_families)) {
			fprintf(stderr, "tierctl: stats: out of memory\n");
			ret = EXIT_REFUSED;
			break;
		}
	}
	for (size_t i = 0; i < nr_families; i++) {
		if (!ret || ret == EXIT_NO_ANSWER)
			printf("%s%s", families[i].head,
			       families[i].samples ? families[i].samples : "");
		free(families[i].head);
		free(families[i].samples);
	}
	free(families);
	free_rows(rows, nr);
	return ret;
}

/* Tiers a file's pages are told by: a chain's, with room. */
#define FILES_MAX_TIERS 4

/* One regular file of tierctl files, and what the daemon and the kernel hold of it. */
struct file_row {
	char *path;
	uint64_t ino, size;
	uid_t owner;
	bool is_known;	 /* the daemon answered for it */
	bool has_cached; /* the kernel told its cached pages */
	uint64_t nr_resident, nr_filled, nr_cached;
	uint64_t nr_swapped[FILES_MAX_TIERS];
};

static struct {
	struct file_row *rows;
	size_t nr, cap;
	dev_t dev;
} walk;

static int take_file(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
	struct file_row *rows;

	(void)ftw;
	if (type != FTW_F || !S_ISREG(st->st_mode) || st->st_dev != walk.dev)
		return 0;
	if (walk.nr == walk.cap) {
		size_t cap = walk.cap ? 2 * walk.cap : 64;

		rows = realloc(walk.rows, cap * sizeof(*rows));
		if (!rows)
			return -1;
		walk.rows = rows;
		walk.cap = cap;
	}
	walk.rows[walk.nr] = (struct file_row){ .path = strdup(path),
						.ino = (uint64_t)st->st_ino,
						.size = (uint64_t)st->st_size,
						.owner = st->st_uid };
	return walk.rows[walk.nr++].path ? 0 : -1;
}

/* The regular files under path, this mount's only, into walk. */
static int take_tree(const char *path)
{
	if (!nftw(path, take_file, 32, FTW_PHYS | FTW_MOUNT))
		return 0;
	fprintf(stderr, "tierctl: files: %s: %s\n", path, strerror(errno));
	return -1;
}

/*
 * The kernel's cached pages of a file, as fincore counts them.  The kernel
 * tells them only to whoever owns the file or may write it (others are
 * told every page is cached): false for others, and where it cannot be
 * mapped.
 */
static bool cached_pages(const char *path, uid_t owner, uint64_t size, uint64_t *nr)
{
	size_t nr_pages = (size_t)((size + PAGE_SIZE - 1) / PAGE_SIZE);
	unsigned char *vec;
	bool is_told;
	void *map;
	int fd;

	*nr = 0;
	if (geteuid() && owner != geteuid() && access(path, W_OK))
		return false;
	if (!size)
		return true;
	fd = open(path, O_RDONLY | O_CLOEXEC | O_NOATIME);
	if (fd < 0 && errno == EPERM)
		fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	map = mmap(NULL, (size_t)size, PROT_READ, MAP_SHARED, fd, 0);
	close(fd);
	if (map == MAP_FAILED)
		return false;
	vec = malloc(nr_pages);
	is_told = vec && !mincore(map, (size_t)size, vec);
	for (size_t i = 0; is_told && i < nr_pages; i++)
		*nr += vec[i] & 1;
	free(vec);
	munmap(map, (size_t)size);
	return is_told;
}

/*
 * Ask the daemon about rows[0..n) ("files INO..."), and take its answer:
 * the cache mode, the tiers' names, and a line a file, "INO SIZE RESIDENT
 * FILLED SWAPPED..." in pages, "INO -" for one it does not show.
 */
static int ask_files(const char *mnt, struct file_row *rows, size_t n, char *cache,
		     char tiers[][32], unsigned int *nr_tiers)
{
	char request[CTL_REQUEST_MAX];
	size_t len = (size_t)snprintf(request, sizeof(request), "files");
	const char *line, *next;
	int ret, at;

	for (size_t i = 0; i < n; i++)
		len += (size_t)snprintf(request + len, sizeof(request) - len, " %" PRIu64,
					rows[i].ino);
	ret = ask(mnt, request);
	if (ret)
		return ret;
	for (line = reply; *line; line = next) {
		uint64_t v[3 + FILES_MAX_TIERS], ino;
		unsigned int nr_read = 0;
		char text[512];
		size_t i;

		/* A line at a time: %s and %lu would read on past its end. */
		next = line + strcspn(line, "\n");
		snprintf(text, sizeof(text), "%.*s", (int)(next - line), line);
		next += *next == '\n';
		if (sscanf(text, "cache %31s", cache) == 1)
			continue;
		if (!strncmp(text, "tiers", 5)) {
			*nr_tiers = 0;
			for (const char *p = text + 5;
			     *nr_tiers < FILES_MAX_TIERS &&
			     sscanf(p, " %31s%n", tiers[*nr_tiers], &at) == 1;
			     p += at)
				(*nr_tiers)++;
			continue;
		}
		if (sscanf(text, "%" SCNu64 "%n", &ino, &at) != 1)
			continue;
		for (const char *p = text + at;
		     nr_read < 3 + *nr_tiers && sscanf(p, " %" SCNu64 "%n", &v[nr_read], &at) == 1;
		     p += at)
			nr_read++;
		for (i = 0; i < n && (rows[i].ino != ino || rows[i].is_known); i++)
			;
		if (i == n || nr_read < 3 + *nr_tiers)
			continue; /* "INO -": not shown */
		rows[i].is_known = true;
		rows[i].nr_resident = v[1];
		rows[i].nr_filled = v[2];
		memcpy(rows[i].nr_swapped, v + 3, *nr_tiers * sizeof(v[0]));
	}
	return 0;
}

/* bytes in units, or as a number with is_raw; "-" when not known. */
static void put_cell(bool is_known, uint64_t bytes, bool is_raw)
{
	char text[32] = "-";

	if (is_known && is_raw)
		snprintf(text, sizeof(text), "%" PRIu64, bytes);
	else if (is_known)
		ctl_format_bytes(bytes, text, sizeof(text));
	printf(" %10s", text);
}

/* One line of tierctl files: a file's, or the total's. */
static void put_file_row(const struct file_row *r, unsigned int nr_tiers, bool is_raw)
{
	char esc[4 * PATH_MAX];

	put_cell(r->is_known, r->nr_resident * PAGE_SIZE, is_raw);
	put_cell(r->is_known, r->nr_filled * PAGE_SIZE, is_raw);
	for (unsigned int t = 0; t < nr_tiers; t++)
		put_cell(r->is_known, r->nr_swapped[t] * PAGE_SIZE, is_raw);
	put_cell(r->has_cached, r->nr_cached * PAGE_SIZE, is_raw);
	put_cell(true, r->size, is_raw);
	printf(" %s\n", ctl_escape(r->path, false, esc, sizeof(esc)));
}

/* Add what r tells of its file to the total. */
static void add_file_row(struct file_row *total, const struct file_row *r)
{
	if (r->is_known) {
		total->nr_resident += r->nr_resident;
		total->nr_filled += r->nr_filled;
		for (unsigned int t = 0; t < FILES_MAX_TIERS; t++)
			total->nr_swapped[t] += r->nr_swapped[t];
	}
	if (r->has_cached) {
		total->nr_cached += r->nr_cached;
		total->has_cached = true;
	}
	total->size += r->size;
}

/*
 * tierctl files MNT [PATH...]: each regular file under the PATHs (the whole
 * mount by default) with what the daemon holds of it, by where, and what
 * the kernel caches of it; a total, and a word on the cached copy.
 */
static int cmd_files(const char *mnt, int argc, char **argv)
{
	char cache[32] = "auto", tiers[FILES_MAX_TIERS][32], name[32];
	struct file_row total = { .path = "total", .is_known = true };
	unsigned int nr_tiers = 0;
	int nr_paths = 0, ret = 0;
	bool is_raw = false;
	struct stat st;

	for (int i = 0; i < argc; i++) {
		if (!strcmp(argv[i], "--bytes") || !strcmp(argv[i], "-b")) {
			is_raw = true;
		} else if (argv[i][0] == '-') {
			fprintf(stderr, "tierctl: files: unknown argument '%s'\n", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (stat(mnt, &st)) {
		fprintf(stderr, "tierctl: %s: %s\n", mnt, strerror(errno));
		return EXIT_NOT_TIERFS;
	}
	walk.dev = st.st_dev;
	/* The PATHs, or the whole mount. */
	for (int i = 0; i < argc; i++) {
		if (argv[i][0] == '-')
			continue;
		nr_paths++;
		ret = take_tree(argv[i]) ? EXIT_USAGE : ret;
	}
	if (!nr_paths)
		ret = take_tree(mnt) ? EXIT_USAGE : ret;
	for (size_t i = 0; i < walk.nr && !ret; i += CTL_FILES_MAX)
		ret = ask_files(mnt, walk.rows + i,
				walk.nr - i < CTL_FILES_MAX ? walk.nr - i : CTL_FILES_MAX, cache,
				tiers, &nr_tiers);
	if (!ret) {
		printf("%10s %10s", "RESIDENT", "ZERO");
		for (unsigned int t = 0; t < nr_tiers; t++) {
			size_t k;

			for (k = 0; tiers[t][k] && k + 1 < sizeof(name); k++)
				name[k] = (char)toupper((unsigned char)tiers[t][k]);
			name[k] = '\0';
			printf(" %10s", name);
		}
		printf(" %10s %10s FILE\n", "CACHED", "SIZE");
		for (size_t i = 0; i < walk.nr; i++) {
			struct file_row *r = &walk.rows[i];

			r->has_cached = cached_pages(r->path, r->owner, r->size, &r->nr_cached);
			put_file_row(r, nr_tiers, is_raw);
			add_file_row(&total, r);
		}
		if (walk.nr > 1)
			put_file_row(&total, nr_tiers, is_raw);
	}
	/* The kernel's copy is memory too, and cache=never is how to be without it. */
	if (!ret && total.nr_cached && strcmp(cache, "never")) {
		char cached[32], held[32];

		ctl_format_bytes(total.nr_cached * PAGE_SIZE, cached, sizeof(cached));
		ctl_format_bytes(total.nr_resident * PAGE_SIZE, held, sizeof(held));
		fprintf(stderr,
			"tierctl: the kernel caches %s of these files beside the %s the daemon "
			"holds (cache=%s); with cache=never it keeps no copy, and reads reach the "
			"daemon each time\n",
			cached, held, cache);
	}
	for (size_t i = 0; i < walk.nr; i++)
		free(walk.rows[i].path);
	free(walk.rows);
	return ret;
}

/* A reply to stdout, but its "warning:" lines to stderr. */
static void print_reply(const char *mnt)
{
	for (const char *line = reply, *next; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			next++;
		if (!strncmp(line, "warning: ", 9))
			fprintf(stderr, "tierctl: %s: %.*s", mnt, (int)(next - line), line);
		else
			fwrite(line, 1, (size_t)(next - line), stdout);
	}
}

static int cmd_set(const char *mnt, int argc, char **argv)
{
	char request[CTL_REQUEST_MAX];
	int ret;

	if (!argc) {
		fprintf(stderr, "tierctl: set: want at least one KEY=VALUE\n");
		return EXIT_USAGE;
	}
	for (int i = 0; i < argc; i++) {
		if (!strchr(argv[i], '=')) {
			fprintf(stderr, "tierctl: set: '%s' is not KEY=VALUE\n", argv[i]);
			return EXIT_USAGE;
		}
	}
	if (!join_request(request, sizeof(request), "set", argc, argv))
		return EXIT_USAGE;
	ret = ask(mnt, request);
	if (!ret)
		print_reply(mnt);
	return ret;
}

/* The reply to "drain status". */
struct drain_progress {
	char state[16]; /* idle, running, done, stopped, failed */
	uint64_t pages_done;
	uint64_t pages_total;
	uint64_t bytes_per_sec;
	uint64_t elapsed_ms;
	uint64_t hits;	 /* pages that were resident already */
	char error[256]; /* why it failed */
};

/* Parse reply into st; false if it has no state line. */
static bool parse_drain_progress(struct drain_progress *st)
{
	char *line, *next, *value;

	memset(st, 0, sizeof(*st));
	for (line = reply; *line; line = next) {
		next = line + strcspn(line, "\n");
		if (*next)
			*next++ = '\0';
		value = strchr(line, ' ');
		if (!value)
			continue;
		*value++ = '\0';
		if (!strcmp(line, "state"))
			snprintf(st->state, sizeof(st->state), "%s", value);
		else if (!strcmp(line, "error"))
			snprintf(st->error, sizeof(st->error), "%s", value);
		else if (!strcmp(line, "pages_done"))
			st->pages_done = strtoull(value, NULL, 10);
		else if (!strcmp(line, "pages_total"))
			st->pages_total = strtoull(value, NULL, 10);
		else if (!strcmp(line, "bytes_per_sec"))
			st->bytes_per_sec = strtoull(value, NULL, 10);
		else if (!strcmp(line, "elapsed_ms"))
			st->elapsed_ms = strtoull(value, NULL, 10);
		else if (!strcmp(line, "hits"))
			st->hits = strtoull(value, NULL, 10);
	}
	return st->state[0];
}

/*
 * The pace of the last second or so, as a drain slows when it reaches
 * pages of a slower tier, or when other work competes: the average since
 * the start would promise an end that then slips.
 */
struct drain_pace {
	uint64_t since_ms, since_done; /* the window's start, daemon time */
	uint64_t bytes_per_sec;	       /* over the last whole window; 0: none yet */
};

static void pace_update(struct drain_pace *p, const struct drain_progress *st)
{
	enum { WINDOW_MS = 1000 };

	if (st->elapsed_ms < p->since_ms || st->pages_done < p->since_done) {
		p->since_ms = st->elapsed_ms;
		p->since_done = st->pages_done;
		return;
	}
	if (st->elapsed_ms - p->since_ms < WINDOW_MS)
		return;
	p->bytes_per_sec = (st->pages_done - p->since_done) * PAGE_SIZE * 1000 /
			   (st->elapsed_ms - p->since_ms);
	p->since_ms = st->elapsed_ms;
	p->since_done = st->pages_done;
}

/* The rate shown: the recent one, or the average until there is one. */
static uint64_t pace_rate(const struct drain_pace *p, const struct drain_progress *st)
{
	return p->bytes_per_sec ? p->bytes_per_sec : st->bytes_per_sec;
}

/* "ETA 12 s" at the recent pace, or "ETA ?" before there is one. */
static void format_eta(const struct drain_progress *st, uint64_t bytes_per_sec, char *out,
		       size_t size)
{
	if (!bytes_per_sec || st->pages_done > st->pages_total) {
		snprintf(out, size, "ETA ?");
		return;
	}
	snprintf(out, size, "ETA %" PRIu64 " s",
		 ((st->pages_total - st->pages_done) * PAGE_SIZE * 1000 / bytes_per_sec + 999) /
			 1000);
}

static void show_progress(const struct drain_progress *st, uint64_t bytes_per_sec, bool is_tty)
{
	enum { BAR_WIDTH = 24 };
	uint64_t percent = st->pages_total ? st->pages_done * 100 / st->pages_total : 100;
	char bar[BAR_WIDTH + 1], eta[32];
	int filled = (int)(percent > 100 ? BAR_WIDTH : percent * BAR_WIDTH / 100);

	format_eta(st, bytes_per_sec, eta, sizeof(eta));
	if (!is_tty) {
		fprintf(stderr, "drain: %" PRIu64 "/%" PRIu64 " pages, %" PRIu64 " MB/s, %s\n",
			st->pages_done, st->pages_total, bytes_per_sec / 1000000, eta);
		return;
	}
	memset(bar, '#', (size_t)filled);
	memset(bar + filled, '.', (size_t)(BAR_WIDTH - filled));
	bar[BAR_WIDTH] = '\0';
	fprintf(stderr,
		"\r[%s] %3" PRIu64 "%%  %" PRIu64 "/%" PRIu64 " pages  %" PRIu64 " MB/s  %s\033[K",
		bar, percent, st->pages_done, st->pages_total, bytes_per_sec / 1000000, eta);
}

static int cmd_drain(const char *mnt, int argc, char **argv)
{
	struct sigaction sa = { .sa_handler = on_signal }; /* no SA_RESTART: wake the sleep */
	const struct timespec poll_interval = { .tv_nsec = 200 * 1000 * 1000 };
	bool is_tty = isatty(STDERR_FILENO), is_stopping = false;
	uint64_t last_line_ms = clock_now_ms();
	struct drain_pace pace = { 0 };
	struct drain_progress st;
	int ret;

	for (int i = 0; i < argc; i++) {
		const char *target = NULL;

		if (!strcmp(argv[i], "--to") && i + 1 < argc)
			target = argv[++i];
		else if (!strncmp(argv[i], "--to=", 5))
			target = argv[i] + 5;
		if (!target) {
			fprintf(stderr, "tierctl: drain: unknown argument '%s'\n", argv[i]);
			return EXIT_USAGE;
		}
		if (strcmp(target, "memory")) {
			fprintf(stderr, "tierctl: drain: unknown target '%s': only 'memory'\n",
				target);
			return EXIT_USAGE;
		}
	}
	sigemptyset(&sa.sa_mask);
	sigaddset(&sa.sa_mask, SIGINT);
	sigaddset(&sa.sa_mask, SIGTERM);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);

	ret = ask(mnt, "drain start");
	if (ret)
		return ret;
	if (!strncmp(reply, "running", 7))
		fprintf(stderr, "drain: already running; following it\n");
	for (;;) {
		if (nr_signals && !is_stopping) {
			/* The drain thread stops after its batch: wait to report what it did. */
			ret = ask(mnt, "drain stop");
			if (ret)
				return ret;
			is_stopping = true;
			fprintf(stderr, "%sdrain: stopping after the current batch\n",
				is_tty ? "\r\033[K" : "");
		} else if (nr_signals > 1) {
			fprintf(stderr, "drain: not waiting; it stops after the current batch\n");
			return EXIT_INTERRUPTED;
		}
		ret = ask(mnt, "drain status");
		if (ret)
			return ret;
		if (!parse_drain_progress(&st)) {
			fprintf(stderr, "tierctl: %s: drain status without a state\n", mnt);
			return EXIT_REFUSED;
		}
		if (strcmp(st.state, "running"))
			break;
		pace_update(&pace, &st);
		if (is_tty) {
			show_progress(&st, pace_rate(&pace, &st), true);
		} else if (clock_now_ms() - last_line_ms >= 1000) {
			show_progress(&st, pace_rate(&pace, &st), false);
			last_line_ms = clock_now_ms();
		}
		nanosleep(&poll_interval, NULL);
	}
	if (is_tty)
		fputs("\r\033[K", stderr);

	if (!strcmp(st.state, "done")) {
		printf("drain: %" PRIu64 " pages in %" PRIu64 ".%01" PRIu64 " s, %" PRIu64
		       " MB/s, %" PRIu64 " already resident\n",
		       st.pages_done, st.elapsed_ms / 1000, st.elapsed_ms % 1000 / 100,
		       st.bytes_per_sec / 1000000, st.hits);
		return 0;
	}
	if (!strcmp(st.state, "stopped") && is_stopping) {
		printf("stopped: %" PRIu64
		       " pages brought back, nothing lost; run again to finish\n",
		       st.pages_done);
		return EXIT_INTERRUPTED;
	}
	if (!strcmp(st.state, "stopped"))
		fprintf(stderr,
			"tierctl: %s: drain stopped by another request after %" PRIu64
			" pages, nothing lost\n",
			mnt, st.pages_done);
	else if (!strcmp(st.state, "failed"))
		fprintf(stderr, "tierctl: %s: drain failed after %" PRIu64 " pages: %s\n", mnt,
			st.pages_done, st.error[0] ? st.error : "no reason given");
	else
		fprintf(stderr, "tierctl: %s: drain is %s, not running\n", mnt, st.state);
	return EXIT_REFUSED;
}

static const struct command commands[] = {
	{ .name = "list",
	  .run = cmd_list,
	  .synopsis = "tierctl list [--json] [--bytes] [--raw] [--noheadings]\n"
		      "                    [--output [+]COL,...|--output-all]",
	  .help = "  One row per tierfs mount of this mount namespace, as zramctl has one per\n"
		  "  device; the same as tierctl with no command.  Sizes are in units unless\n"
		  "  --bytes; --raw puts one space between cells; --output +COL adds to the\n"
		  "  default columns; --json prints {\"mounts\": [...]}, sizes in bytes, null\n"
		  "  where a value is undefined.  A mount whose daemon does not answer shows\n"
		  "  '-' and exits 4 after the rest.\n",
	  .has_no_mount = true,
	  .print_more_help = print_columns },
	{ .name = "stats",
	  .run = cmd_stats,
	  .synopsis = "tierctl stats MOUNTPOINT [--json|--bytes|--prometheus]\n"
		      "       tierctl stats --all --prometheus",
	  .help = "  The daemon's counters: data, memory budget, backend, reclaim, page pool,\n"
		  "  requests, sizes in units; --bytes in bytes; --json one JSON object, for\n"
		  "  scripts; --prometheus the Prometheus text format (node-exporter's textfile\n"
		  "  collector), with --all every mount's in one.  Anyone may read them.\n" },
	{ .name = "files",
	  .run = cmd_files,
	  .synopsis = "tierctl files MOUNTPOINT [PATH...] [--bytes]",
	  .help = "  Each regular file under the PATHs (the whole mount by default): what the\n"
		  "  daemon holds of it, resident, as zero (same-filled) pages and swapped to\n"
		  "  each tier, what the kernel caches of it (as fincore), its size; a total.\n"
		  "  Others see their own files and those anyone may read.\n" },
	{ .name = "reclaim",
	  .run = cmd_reclaim,
	  .synopsis = "tierctl reclaim MOUNTPOINT SIZE|all [--bytes]",
	  .help = "  Evict SIZE bytes (" OPTIONS_SUFFIXES " suffix) or all resident pages to the\n"
		  "  backend now.  Root or the user who mounted only.\n" },
	{ .name = "reset-peaks",
	  .run = cmd_reset_peaks,
	  .synopsis = "tierctl reset-peaks MOUNTPOINT",
	  .help = "  Start footprint_peak_bytes and pool_peak_bytes again from what is held now\n"
		  "  (as writing zram's mem_used_max).  Root or the user who mounted only.\n" },
	{ .name = "set",
	  .run = cmd_set,
	  .synopsis = "tierctl set MOUNTPOINT KEY=VALUE...",
	  .help = "  Change settings of the running daemon, all or none, and print them all:\n"
		  "    size=SIZE       file data limit (" OPTIONS_SUFFIXES
		  " suffix or N% of RAM); 0 =\n"
		  "                    none; not below the data held\n"
		  "    nr_inodes=N     inode limit, not below the inodes in use; 0 = none\n"
		  "    mem=SIZE        resident budget, at least 4k; more than RAM is taken\n"
		  "                    with a warning\n"
		  "    memlimit=SIZE   the daemon's whole memory limit, at least 32m; 0 = none\n"
		  "    readahead=auto|direct|cluster|vma   what a swap-in brings back\n"
		  "    pool_max=SIZE|N%  a chain's RAM tier bound, N% of the memory limit\n"
		  "    cgroup=PATH [mem=SIZE]  a tenant cgroup's resident share instead\n"
		  "                    (without mem=: back to cg_share=)\n"
		  "  Root or the user who mounted only.\n" },
	{ .name = "drain",
	  .run = cmd_drain,
	  .synopsis = "tierctl drain MOUNTPOINT [--to memory]",
	  .help = "  Bring every swapped page back to memory, showing progress.  Refused\n"
		  "  when the data does not fit in the budget (raise it with tierctl set).\n"
		  "  Ctrl-C stops it after the current batch, losing nothing (exit 130).\n"
		  "  Root or the user who mounted only.\n" },
};

#define NR_COMMANDS (sizeof(commands) / sizeof(commands[0]))

static void print_usage(FILE *f, bool is_full)
{
	for (size_t i = 0; i < NR_COMMANDS; i++)
		fprintf(f, "%s %s\n", i ? "      " : "usage:", commands[i].synopsis);
	fputs("       tierctl [COMMAND] --help, tierctl -V|--version\n", f);
	fputs("options: --timeout SECONDS  wait that long for the daemon (default 5)\n", f);
	fputs("a command's options may come before or after its MOUNTPOINT\n", f);
	if (!is_full)
		return;
	fputs("\n", f);
	for (size_t i = 0; i < NR_COMMANDS; i++) {
		fprintf(f, "%s\n%s", commands[i].name, commands[i].help);
		if (commands[i].print_more_help)
			commands[i].print_more_help(f);
	}
	fputs("\n" EXIT_STATUS_HELP, f);
}

static bool is_help(const char *arg)
{
	return !strcmp(arg, "-h") || !strcmp(arg, "--help");
}

/*
 * Move the mount point to the front of a command's arguments, so that its
 * options may come before it ("stats --json MNT") as well as after.  It is
 * the first argument that is no option and no option's value.  Returns
 * false when there is none.
 */
static bool mount_first(int argc, char **argv)
{
	static const char *const with_value[] = { "--to" };

	for (int i = 0; i < argc; i++) {
		char *mnt = argv[i];

		if (mnt[0] != '-') {
			memmove(argv + 1, argv, (size_t)i * sizeof(argv[0]));
			argv[0] = mnt;
			return true;
		}
		for (size_t j = 0; j < sizeof(with_value) / sizeof(with_value[0]); j++)
			if (!strcmp(mnt, with_value[j]))
				i++;
	}
	return false;
}

/*
 * Take "--timeout SECONDS" (or "--timeout=SECONDS") out of argv, wherever
 * it is.  Returns false, having said why, on a bad value.
 */
static bool take_timeout(int *argc, char **argv)
{
	for (int i = 1; i < *argc; i++) {
		const char *value = NULL;
		int nr_taken = 1;
		double seconds;
		char *end;

		if (!strncmp(argv[i], "--timeout=", 10))
			value = argv[i] + 10;
		else if (!strcmp(argv[i], "--timeout") && i + 1 < *argc)
			value = argv[i + 1], nr_taken = 2;
		else if (!strcmp(argv[i], "--timeout"))
			value = "";
		if (!value)
			continue;
		seconds = strtod(value, &end);
		if (!*value || *end || !(seconds > 0) || seconds > 86400) {
			fprintf(stderr, "tierctl: --timeout: want seconds above 0, got '%s'\n",
				value);
			return false;
		}
		timeout_ms = (int)(seconds * 1000 + 0.5) ?: 1;
		memmove(argv + i, argv + i + nr_taken,
			(size_t)(*argc - i - nr_taken + 1) * sizeof(argv[0]));
		*argc -= nr_taken;
		i--;
	}
	return true;
}

int main(int argc, char **argv)
{
	const struct command *cmd = NULL;
	int ret;

	/* A daemon that goes away mid-request is an error to report, not a kill. */
	signal(SIGPIPE, SIG_IGN);
	if (!take_timeout(&argc, argv))
		return EXIT_USAGE;
	if (argc < 2)
		return cmd_list(NULL, 0, argv + argc);
	if (is_help(argv[1])) {
		print_usage(stdout, true);
		return 0;
	}
	if (!strcmp(argv[1], "-V") || !strcmp(argv[1], "--version")) {
		puts("tierctl " TIERFS_VERSION);
		return 0;
	}
	/* As zramctl: options and no command list the mounts. */
	if (argv[1][0] == '-')
		return cmd_list(NULL, argc - 1, argv + 1);
	for (size_t i = 0; i < NR_COMMANDS; i++)
		if (!strcmp(argv[1], commands[i].name))
			cmd = &commands[i];
	if (!cmd) {
		fprintf(stderr, "tierctl: unknown command '%s'\n", argv[1]);
		print_usage(stderr, false);
		return EXIT_USAGE;
	}
	for (int i = 2; i < argc; i++) {
		if (is_help(argv[i])) {
			printf("usage: %s\n%s", cmd->synopsis, cmd->help);
			if (cmd->print_more_help)
				cmd->print_more_help(stdout);
			printf("\n" EXIT_STATUS_HELP);
			return 0;
		}
	}
	for (int i = 2; i < argc && cmd->run == cmd_stats; i++)
		if (!strcmp(argv[i], "--all"))
			return cmd_stats_all(argc - 2, argv + 2);
	if (cmd->has_no_mount) {
		ret = cmd->run(NULL, argc - 2, argv + 2);
	} else if (!mount_first(argc - 2, argv + 2)) {
		fprintf(stderr, "tierctl: %s: want a MOUNTPOINT\n", cmd->name);
		ret = EXIT_USAGE;
	} else {
		ret = cmd->run(argv[2], argc - 3, argv + 3);
	}
	if (ret == EXIT_USAGE)
		fprintf(stderr, "usage: %s\n", cmd->synopsis);
	return ret;
}
