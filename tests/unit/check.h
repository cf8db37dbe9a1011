/* SPDX-License-Identifier: MIT */
/*
 * Check macros shared by the unit tests.  A check that fails prints where it
 * is, what it expected and what it got (CHECK_VERBOSE=1 prints passes too);
 * check_done() prints "# name: N passed, M failed" and gives the exit status.
 */
#ifndef TIERFS_TESTS_UNIT_CHECK_H
#define TIERFS_TESTS_UNIT_CHECK_H

#include <inttypes.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define T_EXIT_PASS 0
#define T_EXIT_FAIL 1
#define T_EXIT_SKIP 77

static unsigned int check_nr_passed, check_nr_failed;
static char check_context[256]; /* printed with each failure while set */

/* An integer of any type, keeping its sign, so -1 never equals UINT64_MAX. */
struct check_value {
	bool is_signed;
	int64_t s;
	uint64_t u;
};

static inline struct check_value check_signed(int64_t v)
{
	return (struct check_value){ true, v, (uint64_t)v };
}

static inline struct check_value check_unsigned(uint64_t v)
{
	return (struct check_value){ false, (int64_t)v, v };
}

/* clang-format off */
#define CHECK_VALUE(x)								\
	_Generic((x),								\
		char: check_signed, signed char: check_signed,			\
		short: check_signed, int: check_signed,				\
		long: check_signed, long long: check_signed,			\
		bool: check_unsigned, unsigned char: check_unsigned,		\
		unsigned short: check_unsigned, unsigned int: check_unsigned,	\
		unsigned long: check_unsigned,					\
		unsigned long long: check_unsigned)(x)
/* clang-format on */

__attribute__((format(printf, 1, 2))) static inline void check_set_context(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(check_context, sizeof(check_context), fmt, ap);
	va_end(ap);
}

static inline void check_clear_context(void)
{
	check_context[0] = '\0';
}

static inline bool check_is_verbose(void)
{
	static int verbose = -1;

	if (verbose < 0) {
		const char *v = getenv("CHECK_VERBOSE");

		verbose = v && *v && strcmp(v, "0");
	}
	return verbose;
}

static inline const char *check_basename(const char *file)
{
	const char *slash = strrchr(file, '/');

	return slash ? slash + 1 : file;
}

static inline void check_format_value(struct check_value v, char *out, size_t size)
{
	const char *name = NULL;

	if (v.is_signed && v.s < 0) {
		if (v.s >= -4095)
			name = strerrorname_np((int)-v.s);
		if (name)
			snprintf(out, size, "%" PRId64 " (-%s)", v.s, name);
		else
			snprintf(out, size, "%" PRId64, v.s);
	} else if (v.u >= 65536) {
		snprintf(out, size, "%" PRIu64 " (0x%" PRIx64 ")", v.u, v.u);
	} else {
		snprintf(out, size, "%" PRIu64, v.u);
	}
}

/* Count one check; on failure (or verbose) print what was expected and got. */
static inline bool check_report(bool ok, const char *file, int line, const char *what,
				const char *expected, const char *got)
{
	if (ok)
		check_nr_passed++;
	else
		check_nr_failed++;
	if (!ok || check_is_verbose())
		printf("%s %s:%d: %s%s%s: expected %s, got %s\n", ok ? "ok  " : "FAIL",
		       check_basename(file), line, check_context, check_context[0] ? ": " : "",
		       what, expected, got);
	return ok;
}

static inline bool check_eq(const char *file, int line, const char *expected_expr,
			    const char *got_expr, struct check_value expected,
			    struct check_value got)
{
	char what[512], e[96], g[96];
	bool ok;

	if (expected.is_signed && expected.s < 0)
		ok = got.is_signed && got.s == expected.s;
	else if (got.is_signed && got.s < 0)
		ok = false;
	else
		ok = expected.u == got.u;
	snprintf(what, sizeof(what), "%s == %s", got_expr, expected_expr);
	check_format_value(expected, e, sizeof(e));
	check_format_value(got, g, sizeof(g));
	return check_report(ok, file, line, what, e, g);
}

static inline bool check_true(const char *file, int line, const char *expr, bool ok)
{
	return check_report(ok, file, line, expr, "true", ok ? "true" : "false");
}

static inline bool check_str(const char *file, int line, const char *expected_expr,
			     const char *got_expr, const char *expected, const char *got)
{
	char what[512], e[300], g[300];
	bool ok = expected && got ? !strcmp(expected, got) : expected == got;

	snprintf(what, sizeof(what), "%s == %s", got_expr, expected_expr);
	snprintf(e, sizeof(e), expected ? "\"%.280s\"" : "%sNULL", expected ? expected : "");
	snprintf(g, sizeof(g), got ? "\"%.280s\"" : "%sNULL", got ? got : "");
	return check_report(ok, file, line, what, e, g);
}

/* Memory compare; a mismatch names the first differing byte. */
static inline bool check_mem(const char *file, int line, const char *expected_expr,
			     const char *got_expr, const void *expected, const void *got,
			     size_t len)
{
	const unsigned char *a = expected, *b = got;
	char what[512], e[64], g[64];
	size_t i = 0;

	while (i < len && a[i] == b[i])
		i++;
	snprintf(what, sizeof(what), "%s == %s (%zu bytes)", got_expr, expected_expr, len);
	if (i == len)
		return check_report(true, file, line, what, "equal bytes", "equal bytes");
	snprintf(e, sizeof(e), "0x%02x at byte %zu", a[i], i);
	snprintf(g, sizeof(g), "0x%02x", b[i]);
	return check_report(false, file, line, what, e, g);
}

/* Each evaluates its arguments once and yields true when the check passed. */
#define CHECK_EQ(expected, got) \
	check_eq(__FILE__, __LINE__, #expected, #got, CHECK_VALUE(expected), CHECK_VALUE(got))
#define CHECK(cond) check_true(__FILE__, __LINE__, #cond, (cond))
#define CHECK_STR(expected, got) check_str(__FILE__, __LINE__, #expected, #got, (expected), (got))
#define CHECK_MEM(expected, got, len) \
	check_mem(__FILE__, __LINE__, #expected, #got, (expected), (got), (len))

/* Print the summary line; returns the exit status for main(). */
static inline int check_done(const char *name)
{
	printf("# %s: %u passed, %u failed\n", name, check_nr_passed, check_nr_failed);
	return check_nr_failed ? T_EXIT_FAIL : T_EXIT_PASS;
}

#endif
