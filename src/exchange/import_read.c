/*
 * import_read.c — the records of an import object: its bytes, decompressed
 * (gzip through zlib, zstd through libzstd), cut into records (DynamoDB JSON
 * lines, CSV records, Ion values) and each turned into the typed JSON of an
 * item.  What the records hold is checked later, as a PutItem's item is
 * (import.c); here only their form.
 *
 * A record that cannot be read is an error of that record when the next one
 * can still be found (a JSON line, a CSV record); a damaged stream (a
 * truncated or corrupt gzip or zstd frame) or a malformed Ion value ends the
 * object ("If the Amazon S3 object itself is malformed ... we may skip
 * processing the remaining portion of the object", DynamoDB's import
 * validation rules).  Messages never quote the data.
 */
#include "postgres.h"

#include <zlib.h>
#include <zstd.h>

#include "mb/pg_wchar.h"
#include "utils/builtins.h"
#include "utils/jsonb.h"

#include "exchange/import.h"
#include "types/types.h"

#define RAW_CHUNK (256 * 1024)
#define OUT_CHUNK (256 * 1024)

struct DynImportInput
{
	DynImportSourceFn source;
	void	   *arg;
	DynImportCompression compression;
	DynImportFormat format;
	DynImportCsv csv;
	bool		csv_header_read;
	/* raw (compressed) bytes */
	char	   *raw;
	size_t		raw_len;
	size_t		raw_pos;
	bool		raw_eof;
	/* decompressed bytes */
	char	   *out;
	size_t		out_len;
	size_t		out_pos;
	bool		eof;			/* no more bytes (or a damaged stream) */
	const char *stream_error;	/* the stream is damaged */
	bool		frame_done;		/* gzip / zstd: the last frame ended cleanly */
	z_stream	z;
	bool		z_init;
	ZSTD_DStream *zs;
	int64		bytes;			/* decompressed bytes handed out */
	StringInfoData line;
	int			ion_binary;		/* ION: 1 binary (starts with the version marker), 0 text, -1 not known yet */
	DynIonBinSymbols symbols;	/* binary Ion's local symbol table */
};

/* Names of InputFormat / InputCompressionType. */
bool
DynImportFormatFromName(const char *name, DynImportFormat *f)
{
	if (strcmp(name, "DYNAMODB_JSON") == 0)
		*f = DYN_IMPORT_DYNAMODB_JSON;
	else if (strcmp(name, "ION") == 0)
		*f = DYN_IMPORT_ION;
	else if (strcmp(name, "CSV") == 0)
		*f = DYN_IMPORT_CSV;
	else
		return false;
	return true;
}

bool
DynImportCompressionFromName(const char *name, DynImportCompression *c)
{
	if (strcmp(name, "NONE") == 0)
		*c = DYN_IMPORT_NONE;
	else if (strcmp(name, "GZIP") == 0)
		*c = DYN_IMPORT_GZIP;
	else if (strcmp(name, "ZSTD") == 0)
		*c = DYN_IMPORT_ZSTD;
	else
		return false;
	return true;
}

/* Read more raw bytes; false at the end of the object. */
static bool
fill_raw(DynImportInput *in)
{
	size_t		n;

	if (in->raw_eof)
		return false;
	if (in->raw_pos < in->raw_len)
		return true;
	n = in->source(in->arg, in->raw, RAW_CHUNK);
	in->raw_pos = 0;
	in->raw_len = n;
	if (n == 0)
		in->raw_eof = true;
	return n > 0;
}

/* A damaged stream: no more bytes. */
static void
stream_failed(DynImportInput *in, const char *msg)
{
	in->stream_error = msg;
	in->eof = true;
	in->out_len = in->out_pos = 0;
}

/* Refill the decompressed buffer; false at the end (or on a damaged stream). */
static bool
fill_out(DynImportInput *in)
{
	if (in->eof)
		return false;
	in->out_pos = in->out_len = 0;
	while (in->out_len == 0)
	{
		if (!fill_raw(in))
		{
			if (in->compression != DYN_IMPORT_NONE && !in->frame_done)
				stream_failed(in, in->compression == DYN_IMPORT_GZIP ?
							  "The GZIP stream is truncated" : "The ZSTD stream is truncated");
			in->eof = true;
			return false;
		}
		if (in->compression == DYN_IMPORT_NONE)
		{
			size_t		n = Min(in->raw_len - in->raw_pos, (size_t) OUT_CHUNK);

			memcpy(in->out, in->raw + in->raw_pos, n);
			in->raw_pos += n;
			in->out_len = n;
		}
		else if (in->compression == DYN_IMPORT_GZIP)
		{
			int			rc;

			if (in->frame_done)
			{
				/* another gzip member follows (concatenated members are one stream) */
				if (inflateReset(&in->z) != Z_OK)
				{
					stream_failed(in, "The GZIP stream is corrupt");
					return false;
				}
				in->frame_done = false;
			}
			in->z.next_in = (Bytef *) in->raw + in->raw_pos;
			in->z.avail_in = in->raw_len - in->raw_pos;
			in->z.next_out = (Bytef *) in->out;
			in->z.avail_out = OUT_CHUNK;
			rc = inflate(&in->z, Z_NO_FLUSH);
			in->raw_pos = in->raw_len - in->z.avail_in;
			in->out_len = OUT_CHUNK - in->z.avail_out;
			if (rc == Z_STREAM_END)
				in->frame_done = true;
			else if (rc != Z_OK && !(rc == Z_BUF_ERROR && in->out_len > 0))
			{
				stream_failed(in, "The GZIP stream is corrupt");
				return false;
			}
		}
		else
		{
			ZSTD_inBuffer ib = {in->raw, in->raw_len, in->raw_pos};
			ZSTD_outBuffer ob = {in->out, OUT_CHUNK, 0};
			size_t		rc = ZSTD_decompressStream(in->zs, &ob, &ib);

			if (ZSTD_isError(rc))
			{
				stream_failed(in, "The ZSTD stream is corrupt");
				return false;
			}
			in->raw_pos = ib.pos;
			in->out_len = ob.pos;
			in->frame_done = (rc == 0);
		}
	}
	return true;
}

/* The next byte, -1 at the end. */
static inline int
in_getc(DynImportInput *in)
{
	if (in->out_pos >= in->out_len && !fill_out(in))
		return -1;
	in->bytes++;
	return (unsigned char) in->out[in->out_pos++];
}

/* The next byte without taking it, -1 at the end. */
static inline int
in_peek(DynImportInput *in)
{
	if (in->out_pos >= in->out_len && !fill_out(in))
		return -1;
	return (unsigned char) in->out[in->out_pos];
}

static int
ion_getc(void *arg)
{
	return in_getc((DynImportInput *) arg);
}

static int
ion_peek(void *arg)
{
	return in_peek((DynImportInput *) arg);
}

/* Open an object's records. */
DynImportInput *
DynImportOpen(DynImportSourceFn fn, void *arg, DynImportCompression compression,
			  DynImportFormat format, const DynImportCsv *csv)
{
	DynImportInput *in = palloc0(sizeof(DynImportInput));

	in->source = fn;
	in->arg = arg;
	in->compression = compression;
	in->format = format;
	if (csv)
		in->csv = *csv;
	in->raw = palloc(RAW_CHUNK);
	in->out = palloc(OUT_CHUNK);
	initStringInfo(&in->line);
	in->ion_binary = -1;
	if (compression == DYN_IMPORT_GZIP)
	{
		/* 15 + 32: a gzip (or zlib) header, detected */
		if (inflateInit2(&in->z, 15 + 32) != Z_OK)
			elog(ERROR, "could not initialize zlib");
		in->z_init = true;
	}
	else if (compression == DYN_IMPORT_ZSTD)
	{
		in->zs = ZSTD_createDStream();
		if (in->zs == NULL || ZSTD_isError(ZSTD_initDStream(in->zs)))
			elog(ERROR, "could not initialize zstd");
	}
	return in;
}

/* Release the decompressors. */
void
DynImportClose(DynImportInput *in)
{
	if (in->z_init)
		inflateEnd(&in->z);
	if (in->zs)
		ZSTD_freeDStream(in->zs);
	in->z_init = false;
	in->zs = NULL;
}

int64
DynImportBytes(DynImportInput *in)
{
	return in->bytes;
}

/* A record error. */
static bool
record_error(DynImportRecord *rec, const char *type, const char *msg, bool fatal)
{
	rec->item = NULL;
	rec->value = NULL;
	rec->error_type = type;
	rec->error = msg;
	rec->fatal = fatal;
	return true;
}

/*
 * Parse JSON text into jsonb; NULL when it is not JSON.  jsonb_in's error is
 * caught without a subtransaction (it has no side effects), and its words
 * (which quote the text) are dropped.
 */
static Jsonb *
parse_json(const char *text, int len)
{
	MemoryContext cxt = CurrentMemoryContext;
	Jsonb	   *volatile jb = NULL;

	PG_TRY();
	{
		/* U+0000 and U+E000 are escaped as in requests (types/nulstr.c); most lines have neither */
		bool		plain = memchr(text, 0xEE, len) == NULL && memchr(text, '\\', len) == NULL;

		jb = DatumGetJsonbP(DirectFunctionCall1(jsonb_in,
												CStringGetDatum(plain ? text : DynNulJsonTextIn(text, len))));
	}
	PG_CATCH();
	{
		int			code = geterrcode();

		if (ERRCODE_TO_CATEGORY(code) != ERRCODE_DATA_EXCEPTION &&
			ERRCODE_TO_CATEGORY(code) != ERRCODE_PROGRAM_LIMIT_EXCEEDED)
			PG_RE_THROW();
		MemoryContextSwitchTo(cxt);
		FlushErrorState();
		jb = NULL;
	}
	PG_END_TRY();
	return jb;
}

/* Read one line (without its end) into in->line; false at the end of the object. */
static bool
read_line(DynImportInput *in, bool *too_long)
{
	bool		any = false;

	resetStringInfo(&in->line);
	*too_long = false;
	for (;;)
	{
		char	   *start;
		char	   *nl;
		size_t		n;

		if (in->out_pos >= in->out_len && !fill_out(in))
			break;
		any = true;
		start = in->out + in->out_pos;
		nl = memchr(start, '\n', in->out_len - in->out_pos);
		n = nl ? (size_t) (nl - start) : in->out_len - in->out_pos;
		if (in->line.len + n <= DYN_IMPORT_MAX_RECORD)
			appendBinaryStringInfo(&in->line, start, n);
		else
			*too_long = true;
		in->out_pos += n + (nl ? 1 : 0);
		in->bytes += n + (nl ? 1 : 0);
		if (nl)
			break;
	}
	if (!any)
		return false;
	if (in->line.len > 0 && in->line.data[in->line.len - 1] == '\r')
		in->line.data[--in->line.len] = '\0';
	return true;
}

/* A DynamoDB JSON line: {"Item": {...}}. */
static bool
next_json(DynImportInput *in, DynImportRecord *rec)
{
	bool		too_long;
	Jsonb	   *jb;
	JsonbValue	v;
	int			i;

	for (;;)
	{
		if (!read_line(in, &too_long))
			return false;
		for (i = 0; i < in->line.len && isspace((unsigned char) in->line.data[i]); i++)
			;
		if (i < in->line.len || too_long)
			break;				/* blank lines are no records */
	}
	if (too_long)
		return record_error(rec, "InvalidFormat", "The record is larger than the maximum record size", false);
	if (dynindex_import_fast_json && DynImportJsonItem(in->line.data, in->line.len, &rec->value))
	{
		rec->item = NULL;
		rec->error = NULL;
		return true;
	}
	jb = parse_json(in->line.data, in->line.len);
	if (jb == NULL)
		return record_error(rec, "InvalidFormat", "The record is not valid JSON", false);
	/* jsonb_in (PostgreSQL 15) copies the bytes of a string as they are */
	if (!pg_verifymbstr(in->line.data, in->line.len, true))
		return record_error(rec, "InvalidFormat", "The record is not valid UTF-8", false);
	if (!JB_ROOT_IS_OBJECT(jb) ||
		getKeyJsonValueFromContainer(&jb->root, "Item", 4, &v) == NULL)
		return record_error(rec, "InvalidFormat", "The record has no Item: DynamoDB JSON records are {\"Item\": {...}}", false);
	if (v.type != jbvBinary || !JsonContainerIsObject(v.val.binary.data))
		return record_error(rec, "InvalidFormat", "The record's Item is not a map of attribute values", false);
	rec->item = JsonbValueToJsonb(&v);
	rec->error = NULL;
	return true;
}

/* Read one CSV record's fields (RFC 4180 quoting); false at the end. */
static bool
read_csv_fields(DynImportInput *in, List **fields, const char **error)
{
	StringInfoData f;
	int			c;
	bool		quoted = false;
	bool		any = false;
	int			total = 0;

	*fields = NIL;
	*error = NULL;
	initStringInfo(&f);
	for (;;)
	{
		c = in_getc(in);
		if (c < 0)
		{
			if (quoted)
				*error = "The record has an unterminated quoted field";
			if (!any)
				return false;
			*fields = lappend(*fields, pstrdup(f.data));
			return true;
		}
		any = true;
		if (++total > DYN_IMPORT_MAX_RECORD && *error == NULL)
			*error = "The record is larger than the maximum record size";
		if (quoted)
		{
			if (c == '"')
			{
				if (in_peek(in) == '"')
				{
					in_getc(in);
					appendStringInfoChar(&f, '"');
				}
				else
					quoted = false;
			}
			else if (*error == NULL)
				appendStringInfoChar(&f, (char) c);
			continue;
		}
		if (c == '"' && f.len == 0)
			quoted = true;
		else if (c == in->csv.delimiter)
		{
			*fields = lappend(*fields, pstrdup(f.data));
			resetStringInfo(&f);
		}
		else if (c == '\n' || c == '\r')
		{
			if (c == '\r' && in_peek(in) == '\n')
				in_getc(in);
			if (*fields == NIL && f.len == 0)
			{
				any = false;	/* an empty line: no record */
				continue;
			}
			*fields = lappend(*fields, pstrdup(f.data));
			return true;
		}
		else if (*error == NULL)
			appendStringInfoChar(&f, (char) c);
	}
}

/* Push one attribute {"name": {"T": "value"}} of a CSV record. */
static void
push_csv_attr(JsonbParseState **st, const char *name, const char *type, const char *value)
{
	JsonbValue	k;
	JsonbValue	v;

	k.type = jbvString;
	k.val.string.val = (char *) name;
	k.val.string.len = strlen(name);
	pushJsonbValue(st, WJB_KEY, &k);
	pushJsonbValue(st, WJB_BEGIN_OBJECT, NULL);
	k.val.string.val = (char *) type;
	k.val.string.len = strlen(type);
	pushJsonbValue(st, WJB_KEY, &k);
	v.type = jbvString;
	v.val.string.val = (char *) value;
	v.val.string.len = strlen(value);
	pushJsonbValue(st, WJB_VALUE, &v);
	pushJsonbValue(st, WJB_END_OBJECT, NULL);
}

/*
 * A CSV record: the header names the attributes; key attributes take their
 * AttributeDefinitions type, every other column is a string, and an empty
 * column is no attribute (DynamoDB's CSV import).
 */
static bool
next_csv(DynImportInput *in, DynImportRecord *rec)
{
	List	   *fields;
	const char *error;
	ListCell   *lc;
	int			i;
	JsonbParseState *st = NULL;

	if (in->csv.nheader == 0 && !in->csv_header_read)
	{
		in->csv_header_read = true;
		if (!read_csv_fields(in, &fields, &error))
			return false;
		if (error)
			return record_error(rec, "InvalidFormat", "The CSV header cannot be read", true);
		in->csv.nheader = list_length(fields);
		in->csv.header = palloc(sizeof(char *) * in->csv.nheader);
		i = 0;
		foreach(lc, fields)
		{
			char	   *name = lfirst(lc);

			/* a UTF-8 byte order mark before the first name */
			if (i == 0 && (unsigned char) name[0] == 0xEF && (unsigned char) name[1] == 0xBB &&
				(unsigned char) name[2] == 0xBF)
				name += 3;
			in->csv.header[i++] = name;
		}
	}
	if (!read_csv_fields(in, &fields, &error))
		return false;
	if (error)
		return record_error(rec, "InvalidFormat", error, false);
	if (list_length(fields) != in->csv.nheader)
		return record_error(rec, "InvalidFormat",
							psprintf("The record has %d columns; the header has %d", list_length(fields), in->csv.nheader),
							false);
	pushJsonbValue(&st, WJB_BEGIN_OBJECT, NULL);
	i = 0;
	foreach(lc, fields)
	{
		const char *value = lfirst(lc);
		const char *name = in->csv.header[i++];
		const char *type = "S";
		int			k;

		if (value[0] == '\0')
			continue;
		if (pg_verifymbstr(value, strlen(value), true) == false)
			return record_error(rec, "InvalidFormat", "The record is not valid UTF-8", false);
		for (k = 0; k < in->csv.nkeys; k++)
			if (strcmp(in->csv.key_names[k], name) == 0)
				type = in->csv.key_types[k];
		push_csv_attr(&st, name, type, value);
	}
	rec->item = JsonbValueToJsonb(pushJsonbValue(&st, WJB_END_OBJECT, NULL));
	rec->error = NULL;
	return true;
}

/* An Ion value {Item: {...}}; a malformed one ends the object. */
static bool
next_ion(DynImportInput *in, DynImportRecord *rec)
{
	bool		eof = false;
	const char *error = NULL;
	Jsonb	   *jb;

	/* binary Ion starts with its version marker E0 01 00 EA; text never has byte E0 first */
	if (in->ion_binary < 0)
		in->ion_binary = in_peek(in) == 0xE0;
	if (in->ion_binary)
		jb = DynIonBinReadItem(ion_getc, in, &in->symbols, &eof, &error);
	else
		jb = DynIonReadItem(ion_getc, ion_peek, in, &eof, &error);

	if (eof)
		return false;
	if (jb == NULL)
		return record_error(rec, "InvalidFormat", error ? error : "The Ion value cannot be read", true);
	rec->item = jb;
	rec->error = NULL;
	return true;
}

/* The next record of the object; false at its end. */
bool
DynImportNext(DynImportInput *in, DynImportRecord *rec)
{
	bool		got;

	memset(rec, 0, sizeof(*rec));
	if (in->stream_error)
		return false;			/* reported once, below */
	switch (in->format)
	{
		case DYN_IMPORT_DYNAMODB_JSON:
			got = next_json(in, rec);
			break;
		case DYN_IMPORT_CSV:
			got = next_csv(in, rec);
			break;
		default:
			got = next_ion(in, rec);
			break;
	}
	/* a damaged stream: its last (partial) record is dropped, the stream is the error */
	if (in->stream_error)
	{
		record_error(rec, "InvalidFormat", in->stream_error, true);
		in->stream_error = NULL;
		in->eof = true;
		return true;
	}
	return got;
}
