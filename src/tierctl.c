// SPDX-License-Identifier: MIT
/*
 * tierctl: watch and steer a mounted tierfs through its control channel.
 */
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tierfs/ctl.h"

static const char usage[] =
	"usage: tierctl stats MOUNTPOINT [--json]\n"
	"       tierctl reclaim MOUNTPOINT SIZE|all\n"
	"\n"
	"  stats     the daemon's counters: data, memory budget, backend, reclaim,\n"
	"            page pool, requests; --json for scripts\n"
	"  reclaim   evict SIZE bytes (k/m/g suffixes) or all resident pages to the\n"
	"            backend now (root or the mount's owner)\n"
	"\n"
	"exit status: 0 ok, 1 the request failed, 2 usage\n";

int main(int argc, char **argv)
{
	const char *cmd, *mnt;
	bool is_json = false;
	char request[96];
	char *reply;
	int err;

	if (argc >= 2 && (!strcmp(argv[1], "-h") || !strcmp(argv[1], "--help"))) {
		fputs(usage, stdout);
		return 0;
	}
	if (argc < 3) {
		fputs(usage, stderr);
		return 2;
	}
	cmd = argv[1];
	mnt = argv[2];
	if (!strcmp(cmd, "reclaim")) {
		if (argc != 4) {
			fputs(usage, stderr);
			return 2;
		}
		snprintf(request, sizeof(request), "reclaim %.64s", argv[3]);
	} else if (!strcmp(cmd, "stats")) {
		for (int i = 3; i < argc; i++) {
			if (!strcmp(argv[i], "--json")) {
				is_json = true;
			} else {
				fprintf(stderr, "tierctl: unknown argument '%s'\n", argv[i]);
				return 2;
			}
		}
		snprintf(request, sizeof(request), "%s", is_json ? "stats json" : "stats");
	} else {
		fprintf(stderr, "tierctl: unknown command '%s'\n%s", cmd, usage);
		return 2;
	}
	reply = malloc(CTL_REPLY_MAX);
	if (!reply) {
		fprintf(stderr, "tierctl: out of memory\n");
		return 1;
	}
	err = ctl_request(mnt, request, reply, CTL_REPLY_MAX);
	if (err == -ENOTCONN)
		fprintf(stderr, "tierctl: %s: not a tierfs mount (no daemon answers)\n", mnt);
	else if (err == -EPROTO)
		fprintf(stderr, "tierctl: %s: %s\n", mnt, reply);
	else if (err)
		fprintf(stderr, "tierctl: %s: %s\n", mnt, strerror(-err));
	else
		fputs(reply, stdout);
	free(reply);
	return err ? 1 : 0;
}
