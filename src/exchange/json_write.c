/*
 * json_write.c — items as DynamoDB JSON text for exports: compact (no space
 * after ':' or ','), as DynamoDB's own export files are written.
 *
 * The export is bound by this and by gzip (bench/README.md, "Export"):
 * JsonbToCString escapes strings a byte at a time and its text then needed a
 * second pass to restore U+0000 (types/nulstr.c).  Here runs of bytes that
 * need no escape are copied whole and the nulstr escape (ESC '0' -> \u0000,
 * ESC 'E' -> ESC) is undone in the same pass.  The escapes are escape_json's:
 * \" \\ \b \f \n \r \t, other controls as \u00XX; everything else, UTF-8
 * included, is copied.
 */
#include "postgres.h"

#include "utils/builtins.h"
#include "utils/jsonb.h"
#include "utils/numeric.h"

#include "exchange/export.h"

/* ESC of types/nulstr.c: U+E000 in UTF-8 */
#define ESC0 0xEE
#define ESC1 0x80
#define ESC2 0x80

/* Bytes that end a run copied as is: controls, '"', '\\' and ESC's first byte. */
static bool
special(unsigned char c)
{
	return c < 0x20 || c == '"' || c == '\\' || c == ESC0;
}

/* Append a JSON string literal of s (len bytes, nulstr-escaped). */
static void
json_write_string(StringInfo out, const char *s, int len)
{
	const unsigned char *p = (const unsigned char *) s;
	const unsigned char *end = p + len;

	enlargeStringInfo(out, len + 2);
	out->data[out->len++] = '"';
	while (p < end)
	{
		const unsigned char *run = p;

		while (p < end && !special(*p))
			p++;
		if (p > run)
			appendBinaryStringInfo(out, (const char *) run, p - run);
		if (p == end)
			break;
		switch (*p)
		{
			case '"':
				appendBinaryStringInfo(out, "\\\"", 2);
				break;
			case '\\':
				appendBinaryStringInfo(out, "\\\\", 2);
				break;
			case '\b':
				appendBinaryStringInfo(out, "\\b", 2);
				break;
			case '\f':
				appendBinaryStringInfo(out, "\\f", 2);
				break;
			case '\n':
				appendBinaryStringInfo(out, "\\n", 2);
				break;
			case '\r':
				appendBinaryStringInfo(out, "\\r", 2);
				break;
			case '\t':
				appendBinaryStringInfo(out, "\\t", 2);
				break;
			case ESC0:
				if (end - p >= 4 && p[1] == ESC1 && p[2] == ESC2 && (p[3] == '0' || p[3] == 'E'))
				{
					if (p[3] == '0')
						appendBinaryStringInfo(out, "\\u0000", 6);
					else
						appendBinaryStringInfo(out, (const char *) p, 3);
					p += 4;
					continue;
				}
				appendStringInfoChar(out, (char) *p);
				break;
			default:
				appendStringInfo(out, "\\u%04x", *p);
				break;
		}
		p++;
	}
	appendStringInfoChar(out, '"');
}

/* Append a scalar. */
static void
json_write_scalar(StringInfo out, JsonbValue *v)
{
	switch (v->type)
	{
		case jbvString:
			json_write_string(out, v->val.string.val, v->val.string.len);
			break;
		case jbvNumeric:
			appendStringInfoString(out, DatumGetCString(DirectFunctionCall1(numeric_out,
																			NumericGetDatum(v->val.numeric))));
			break;
		case jbvBool:
			appendStringInfoString(out, v->val.boolean ? "true" : "false");
			break;
		case jbvNull:
			appendBinaryStringInfo(out, "null", 4);
			break;
		default:
			elog(ERROR, "malformed stored item: unexpected jsonb value type %d", (int) v->type);
	}
}

/* Append an item as DynamoDB JSON (U+0000 restored as \u0000). */
void
DynExportJsonItem(StringInfo out, Jsonb *item)
{
	JsonbIterator *it = JsonbIteratorInit(&item->root);
	JsonbValue	v;
	JsonbIteratorToken tok;
	bool		first = true;	/* nothing written yet in the current container */
	bool		after_key = false;	/* a key was just written: its value follows */

	if (JB_ROOT_IS_SCALAR(item))
		elog(ERROR, "malformed stored item: not a map");
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if (tok == WJB_VALUE)
		{
			json_write_scalar(out, &v);
			first = false;
			after_key = false;
			continue;
		}
		if (tok == WJB_END_OBJECT || tok == WJB_END_ARRAY)
		{
			appendStringInfoChar(out, tok == WJB_END_OBJECT ? '}' : ']');
			first = false;
			continue;
		}
		/* a key, an element or a container: after a comma unless first or a key's value */
		if (!first && !after_key)
			appendStringInfoChar(out, ',');
		after_key = false;
		first = false;
		switch (tok)
		{
			case WJB_KEY:
				json_write_string(out, v.val.string.val, v.val.string.len);
				appendStringInfoChar(out, ':');
				after_key = true;
				break;
			case WJB_ELEM:
				json_write_scalar(out, &v);
				break;
			case WJB_BEGIN_OBJECT:
			case WJB_BEGIN_ARRAY:
				appendStringInfoChar(out, tok == WJB_BEGIN_OBJECT ? '{' : '[');
				first = true;
				break;
			default:
				break;
		}
	}
}
