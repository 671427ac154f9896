/*
 * decode.c — the output plugin of global tables (a slot's plugin
 * "dynindex": this library).  It sends the other regions' apply workers the
 * replicated changes of each committed transaction — the logical decoding
 * messages capture.c logs, in commit order — and a commit line after them:
 *
 *   M <message: a JSON change>
 *   C <commit time, microseconds since 2000-01-01>
 *
 * one line each ('\n' ends every line but the last of a write: a message's
 * JSON text has none), several in one write: a transaction's lines are kept
 * until its commit, or until they reach DECODE_WRITE_BYTES, and written
 * together — one CopyData message and one send for a small transaction
 * instead of one per line (the sends were a third of the sender's time).
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

/* The lines kept before a write, at most (about: one message may pass it). */
#define DECODE_WRITE_BYTES 65536

/* Per-slot state: the current transaction's lines not yet written, and whether it has some. */
typedef struct DecodeState
{
	StringInfoData lines;
	bool		sent;
} DecodeState;

/* Start: text output, options ignored. */
static void
decode_startup(LogicalDecodingContext *ctx, OutputPluginOptions *opt, bool is_init)
{
	DecodeState *ds = palloc0(sizeof(DecodeState));

	initStringInfo(&ds->lines); /* in the slot's context: kept between callbacks */
	ctx->output_plugin_private = ds;
	opt->output_type = OUTPUT_PLUGIN_TEXTUAL_OUTPUT;
	opt->receive_rewrites = false;
}

/* A transaction begins: nothing sent yet. */
static void
decode_begin(LogicalDecodingContext *ctx, ReorderBufferTXN *txn)
{
	DecodeState *ds = ctx->output_plugin_private;

	resetStringInfo(&ds->lines);
	ds->sent = false;
}

/* Write the kept lines, and line (NULL: none) after them, in one write. */
static void
write_lines(LogicalDecodingContext *ctx, bool last, const char *line)
{
	DecodeState *ds = ctx->output_plugin_private;

	OutputPluginPrepareWrite(ctx, last);
	if (line)
		appendStringInfoString(&ds->lines, line);
	else if (ds->lines.len > 0)
		ds->lines.data[--ds->lines.len] = '\0';	/* the last line's '\n' */
	appendBinaryStringInfo(ctx->out, ds->lines.data, ds->lines.len);
	OutputPluginWrite(ctx, last);
	resetStringInfo(&ds->lines);
}

/* Row changes: not sent (the messages carry the changes). */
static void
decode_change(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, Relation rel, ReorderBufferChange *change)
{
}

/* A replicated change: "M" and the message, kept. */
static void
decode_message(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr lsn, bool transactional,
			   const char *prefix, Size sz, const char *message)
{
	DecodeState *ds = ctx->output_plugin_private;

	if (!transactional || strcmp(prefix, DYN_REPLICATION_PREFIX) != 0)
		return;
	if (ds->lines.len >= DECODE_WRITE_BYTES)
		write_lines(ctx, false, NULL);
	appendStringInfoString(&ds->lines, "M ");
	appendBinaryStringInfo(&ds->lines, message, sz);
	appendStringInfoChar(&ds->lines, '\n');
	ds->sent = true;
}

/* The commit of a transaction that sent changes: its kept lines, then "C" and its commit time. */
static void
decode_commit(LogicalDecodingContext *ctx, ReorderBufferTXN *txn, XLogRecPtr commit_lsn)
{
	DecodeState *ds = ctx->output_plugin_private;

	if (!ds->sent)
		return;
	write_lines(ctx, true, psprintf("C " INT64_FORMAT, (int64) txn->xact_time.commit_time));
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
