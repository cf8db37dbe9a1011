// SPDX-License-Identifier: MIT
/*
 * Unit tests of mpol=: tmpfs's forms against a made-up set of online nodes,
 * the refusals, and the policy set on this thread (node 0 is always there).
 */
#include <errno.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "tierfs/mpol.h"
#include "check.h"

static bool has_node(const struct mpol *p, unsigned int node)
{
	return p->nodes[node / 64] & (1ULL << (node % 64));
}

static unsigned int nr_nodes(const struct mpol *p)
{
	unsigned int nr = 0;

	for (unsigned int n = 0; n < MPOL_MAX_NODES; n++)
		nr += has_node(p, n);
	return nr;
}

static void test_forms(void)
{
	static const struct {
		const char *val;
		int mode;
		unsigned int nr;
	} cases[] = {
		{ "default", MPOL_DEFAULT, 0 },
		{ "local", MPOL_LOCAL, 0 },
		{ "prefer", MPOL_LOCAL, 0 },
		{ "prefer:2", MPOL_PREFERRED, 1 },
		{ "bind:0,2", MPOL_BIND, 2 },
		{ "bind:0-1:3", MPOL_BIND, 3 },
		{ "interleave", MPOL_INTERLEAVE, 4 },
		{ "interleave:1-2", MPOL_INTERLEAVE, 2 },
		{ "bind=static:1", MPOL_BIND | MPOL_F_STATIC_NODES, 1 },
		{ "interleave=relative", MPOL_INTERLEAVE | MPOL_F_RELATIVE_NODES, 4 },
	};
	static const char *const refused[] = {
		"bind",	    "bind:",  "bind:0,",    "bind:0:",	"bind: 0",   "bind:-1",
		"bind:2-1", "bind:x", "prefer:0-1", "local:0",	"default:1", "bind=loose:0",
		"bogus",    "",	      "bind:9",	    "prefer:4",
	};
	struct mpol p;
	char msg[256];

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		check_set_context("%s", cases[i].val);
		CHECK_EQ(0, mpol_parse(cases[i].val, "0-3", &p, msg, sizeof(msg)));
		CHECK_EQ(cases[i].mode, p.mode);
		CHECK_EQ(cases[i].nr, nr_nodes(&p));
	}
	for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
		check_set_context("%s", refused[i]);
		CHECK_EQ(-EINVAL, mpol_parse(refused[i], "0-3", &p, msg, sizeof(msg)));
		CHECK(strstr(msg, "mpol=") != NULL);
	}
	check_clear_context();
	CHECK_EQ(-EINVAL, mpol_parse("bind:9", "0-3", &p, msg, sizeof(msg)));
	CHECK(strstr(msg, "node 9 is not online (online: 0-3)") != NULL);
}

/* bind:0 on this thread, as the daemon sets it, then back to default. */
static void test_apply(void)
{
	struct mpol p;
	unsigned long mask[MPOL_MAX_NODES / 64] = { 0 };
	int mode = -1;
	char msg[256];

	CHECK_EQ(0, mpol_parse("bind:0", NULL, &p, msg, sizeof(msg)));
	CHECK_EQ(0, mpol_apply(&p));
	CHECK_EQ(0, syscall(SYS_get_mempolicy, &mode, mask, MPOL_MAX_NODES + 1, NULL, 0));
	CHECK_EQ(MPOL_BIND, mode);
	CHECK_EQ(1, mask[0]);
	CHECK_EQ(0, mpol_parse("default", NULL, &p, msg, sizeof(msg)));
	CHECK_EQ(0, mpol_apply(&p));
	CHECK_EQ(0, syscall(SYS_get_mempolicy, &mode, mask, MPOL_MAX_NODES + 1, NULL, 0));
	CHECK_EQ(MPOL_DEFAULT, mode);
}

int main(void)
{
	test_forms();
	test_apply();
	return check_done("mpol");
}
