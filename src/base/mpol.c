// SPDX-License-Identifier: MIT
/*
 * mpol=: a NUMA policy for the daemon's memory, checked against the nodes
 * online and set with set_mempolicy(2) (no libnuma: one system call).
 */
#include <ctype.h>
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <linux/mempolicy.h>

#include "tierfs/mpol.h"

static void node_set(struct mpol *p, unsigned int node)
{
	p->nodes[node / 64] |= 1ULL << (node % 64);
}

static bool node_isset(const struct mpol *p, unsigned int node)
{
	return p->nodes[node / 64] & (1ULL << (node % 64));
}

/* A node list, "0-3,5" or "0-3:5", into p's mask: 0 or -EINVAL. */
static int parse_nodes(const char *s, struct mpol *p)
{
	if (!*s)
		return -EINVAL;
	while (*s) {
		char *end;
		unsigned long lo, hi;

		if (!isdigit((unsigned char)*s))
			return -EINVAL;
		lo = hi = strtoul(s, &end, 10);
		if (*end == '-') {
			s = end + 1;
			if (!isdigit((unsigned char)*s))
				return -EINVAL;
			hi = strtoul(s, &end, 10);
		}
		if (lo > hi || hi >= MPOL_MAX_NODES)
			return -EINVAL;
		for (unsigned long n = lo; n <= hi; n++)
			node_set(p, (unsigned int)n);
		if (*end && ((*end != ',' && *end != ':') || !end[1]))
			return -EINVAL;
		s = *end ? end + 1 : end;
	}
	return 0;
}

/* The machine's online nodes, as text; "0" where sysfs has none. */
static const char *online_nodes(char *buf, size_t size)
{
	FILE *f = fopen("/sys/devices/system/node/online", "re");

	snprintf(buf, size, "0");
	if (f) {
		if (!fgets(buf, (int)size, f))
			snprintf(buf, size, "0");
		fclose(f);
	}
	buf[strcspn(buf, "\n")] = '\0';
	return buf;
}

int mpol_parse(const char *val, const char *online, struct mpol *out, char *msg, size_t msg_len)
{
	static const struct {
		const char *name;
		int mode;
		bool has_nodes, needs_nodes;
	} modes[] = {
		{ "default", MPOL_DEFAULT, false, false },
		{ "local", MPOL_LOCAL, false, false },
		{ "prefer", MPOL_PREFERRED, true, false },
		{ "bind", MPOL_BIND, true, true },
		{ "interleave", MPOL_INTERLEAVE, true, false },
	};
	struct mpol up = { 0 };
	char buf[256];
	size_t len = strcspn(val, ":=");
	const char *nodes = strchr(val, ':');
	int flags = 0;
	unsigned int nr = 0;

	memset(out, 0, sizeof(*out));
	if (!online)
		online = online_nodes(buf, sizeof(buf));
	if (parse_nodes(online, &up)) {
		snprintf(msg, msg_len, "mpol=%s: cannot read the online nodes ('%s')", val, online);
		return -EINVAL;
	}
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++) {
		if (strlen(modes[i].name) != len || strncmp(val, modes[i].name, len))
			continue;
		/* =static or =relative: how the nodes follow a cpuset's changes. */
		if (val[len] == '=') {
			size_t flag_len = (nodes ? (size_t)(nodes - val) : strlen(val)) - len - 1;

			if (flag_len == 6 && !strncmp(val + len + 1, "static", 6))
				flags = MPOL_F_STATIC_NODES;
			else if (flag_len == 8 && !strncmp(val + len + 1, "relative", 8))
				flags = MPOL_F_RELATIVE_NODES;
			else
				break;
		}
		out->mode = modes[i].mode | flags;
		if ((nodes && !modes[i].has_nodes) || (!nodes && modes[i].needs_nodes) ||
		    (flags && !modes[i].has_nodes))
			break;
		/* prefer with no node is local, as tmpfs takes it. */
		if (!nodes && modes[i].mode == MPOL_PREFERRED) {
			out->mode = MPOL_LOCAL;
			return 0;
		}
		if (!nodes) {
			if (modes[i].has_nodes)
				memcpy(out->nodes, up.nodes, sizeof(out->nodes));
			return 0;
		}
		if (parse_nodes(nodes + 1, out))
			break;
		for (unsigned int n = 0; n < MPOL_MAX_NODES; n++) {
			if (!node_isset(out, n))
				continue;
			if (!node_isset(&up, n)) {
				snprintf(msg, msg_len,
					 "mpol=%s: node %u is not online (online: %s)", val, n,
					 online);
				return -EINVAL;
			}
			nr++;
		}
		if (modes[i].mode == MPOL_PREFERRED && nr != 1)
			break;
		return 0;
	}
	snprintf(msg, msg_len,
		 "invalid mpol= value '%s': want default, local, prefer[:NODE], bind:NODELIST or "
		 "interleave[:NODELIST]",
		 val);
	return -EINVAL;
}

int mpol_apply(const struct mpol *p)
{
	int mode = p->mode & ~(MPOL_F_STATIC_NODES | MPOL_F_RELATIVE_NODES);
	bool has_nodes = mode != MPOL_DEFAULT && mode != MPOL_LOCAL;

	if (syscall(SYS_set_mempolicy, p->mode, has_nodes ? p->nodes : NULL,
		    has_nodes ? (unsigned long)MPOL_MAX_NODES + 1 : 0UL))
		return -errno;
	return 0;
}
