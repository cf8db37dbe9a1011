// SPDX-License-Identifier: MIT
/*
 * The zstd page codec: slower than lz4, better ratio.  Levels 1 to
 * ZSTD_maxCLevel() (22); zstd's negative "fast" levels are not offered,
 * lz4 covers that ground.
 */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>

#include <zstd.h>
#include <zstd_errors.h>

#include "tierfs/codec.h"

/* ZSTD_maxCLevel() has been 22 in every release; ctx_new clamps to the real one. */
#define ZSTD_CODEC_MAX_LEVEL 22

struct codec_ctx {
	ZSTD_CCtx *cctx;
	ZSTD_DCtx *dctx;
};

static int zstd_ctx_new(int level, struct codec_ctx **out)
{
	struct codec_ctx *ctx = calloc(1, sizeof(*ctx));

	if (!ctx)
		return -ENOMEM;
	ctx->cctx = ZSTD_createCCtx();
	if (!ctx->cctx)
		goto free_ctx;
	ctx->dctx = ZSTD_createDCtx();
	if (!ctx->dctx)
		goto free_cctx;
	if (level < 1)
		level = 1;
	if (level > ZSTD_maxCLevel())
		level = ZSTD_maxCLevel();
	/*
	 * The level is fixed for the context's life; the sizes in the frame
	 * header are redundant (zpool knows both) but cost only a few bytes.
	 */
	if (ZSTD_isError(ZSTD_CCtx_setParameter(ctx->cctx, ZSTD_c_compressionLevel, level)))
		goto free_dctx;
	*out = ctx;
	return 0;

free_dctx:
	ZSTD_freeDCtx(ctx->dctx);
free_cctx:
	ZSTD_freeCCtx(ctx->cctx);
free_ctx:
	free(ctx);
	return -ENOMEM;
}

static void zstd_ctx_free(struct codec_ctx *ctx)
{
	ZSTD_freeDCtx(ctx->dctx);
	ZSTD_freeCCtx(ctx->cctx);
	free(ctx);
}

static int zstd_compress(struct codec_ctx *ctx, const void *src, size_t src_len, void *dst,
			 size_t dst_cap)
{
	size_t ret = ZSTD_compress2(ctx->cctx, dst, dst_cap, src, src_len);

	if (ZSTD_isError(ret))
		return ZSTD_getErrorCode(ret) == ZSTD_error_dstSize_tooSmall ? -ENOSPC : -EIO;
	if (ret > (size_t)INT_MAX)
		return -EIO;
	return (int)ret;
}

static int zstd_decompress(struct codec_ctx *ctx, const void *src, size_t src_len, void *dst,
			   size_t dst_len)
{
	size_t ret = ZSTD_decompressDCtx(ctx->dctx, dst, dst_len, src, src_len);

	return !ZSTD_isError(ret) && ret == dst_len ? 0 : -EIO;
}

const struct codec codec_zstd = {
	.name = "zstd",
	.default_level = ZSTD_CLEVEL_DEFAULT,
	.min_level = 1,
	.max_level = ZSTD_CODEC_MAX_LEVEL,
	.ctx_new = zstd_ctx_new,
	.ctx_free = zstd_ctx_free,
	.compress = zstd_compress,
	.decompress = zstd_decompress,
};
