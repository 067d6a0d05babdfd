/* p2s.c - a run context with its flow table (p2s.h). */
#include "p2s.h"

#include "rpc.h"

int p2s_ctx_init(struct p2s_ctx *ctx)
{
    p2s_ctx_base_init(ctx);
    if ((ctx->tcp = tcp_new()) == NULL)
        return SF_E_NOMEM;
    return 0;
}

void p2s_ctx_free(struct p2s_ctx *ctx)
{
    tcp_free(ctx, ctx->tcp);
    ctx->tcp = NULL;
    p2s_rpc_flush(ctx); /* an input's end has done it, unless the caller fed bytes itself */
    p2s_ctx_base_free(ctx);
}
