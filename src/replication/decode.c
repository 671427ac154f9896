/*
 * decode.c — the output plugin of global tables (a slot's plugin
 * "dynindex": this library).  It sends the other regions' apply workers the
 * replicated changes of each committed transaction — the logical decoding
 * messages capture.c logs, in commit order — and a commit line after them:
 *
 *   M <message: a JSON change>
 *   C <commit time, microseconds since 2000-01-01>
 *
 * Changes applied under a replication origin (by an apply worker, from
 * another region) are filtered out, so a change never goes back to the
 * region it came from.  Row changes are not decoded: the messages carry
 * everything.
 */
#include "postgres.h"

#include "fmgr.h"
#include "replication/logical.h"
#include "replication/origin.h"
#include "replication/output_plugin.h"

#include "replication/replication.h"

/* Per-slot state: did the current transaction send a change? */
typedef struct DecodeState
{
	bool		sent;
} DecodeState;

/* Start: text output, options ignored. */
static void
decode_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	ctx->output_plugin_private = palloc0(sizeof(DecodeState));
	opt->output_type = OUTPUT_PLUGIN_TEXTUAL_OUTPUT;
	opt->receive_rewrites = false;
}

/* A transaction begins: nothing sent yet. */
static void
decode_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
	((DecodeState *) ctx->output_plugin_private)->sent = false;
}

/* Row changes: not sent (the messages carry the changes). */
static void
decode_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel, ReorderBufferChange *change)
{
}

/* A replicated change: "M" and the message. */
static void
decode_message(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn, bool transactional,
			   const char *prefix, Size sz, const char *message)
{
	if (!transactional || strcmp(prefix, DYN_REPLICATION_PREFIX) != 0)
		return;
	OutputPluginPrepareWrite(ctx, false);
	appendStringInfoString(ctx->out, "M ");
	appendBinaryStringInfo(ctx->out, message, sz);
	OutputPluginWrite(ctx, false);
	((DecodeState *) ctx->output_plugin_private)->sent = true;
}

/* The commit of a transaction that sent changes: "C" and its commit time. */
static void
decode_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
	if (!((DecodeState *) ctx->output_plugin_private)->sent)
		return;
	OutputPluginPrepareWrite(ctx, true);
	appendStringInfo(ctx->out, "C " INT64_FORMAT, (int64) txn->xact_time.commit_time);
	OutputPluginWrite(ctx, true);
}

/* Changes applied from another region (under a replication origin) are not sent on. */
static bool
decode_filter_by_origin(LogicalDecodingContext *ctx, RepOriginId origin_id)
{
	return origin_id != InvalidRepOriginId;
}

/* The output plugin's callbacks: PostgreSQL looks this up in the slot's plugin library. */
extern PGDLLEXPORT void _PG_output_plugin_init(OutputPluginCallbacks *cb);

void
_PG_output_plugin_init(OutputPluginCallbacks *cb)
{
	cb->startup_cb = decode_startup;
	cb->begin_cb = decode_begin;
	cb->change_cb = decode_change;
	cb->message_cb = decode_message;
	cb->commit_cb = decode_commit;
	cb->filter_by_origin_cb = decode_filter_by_origin;
}
