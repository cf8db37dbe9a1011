// SPDX-License-Identifier: MIT
/*
 * tierfs: a userspace tmpfs with its own swap tier.
 */
#include <stddef.h>

#include "tierfs/daemon.h"

int main(int argc, char **argv)
{
	return daemon_main(argc, argv, NULL);
}
