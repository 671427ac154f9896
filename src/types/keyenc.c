/*
 * keyenc.c — order-preserving encoding of key values.
 *
 * PostgreSQL's btree on bytea compares with memcmp, so an encoding whose
 * byte order equals DynamoDB's order gives DynamoDB's Query order for free:
 * N numerically (number.c's self-delimiting encoding), S by UTF-8 bytes and
 * B by unsigned bytes.  A single-attribute key stores S and B raw.  In a
 * multi-attribute key every component must be self-delimiting, so S and B
 * escape 0x00 as 0x00 0xFF and end with 0x00 0x01: a shorter string then
 * sorts before any longer string it prefixes, and components compare one
 * after another.  Escaping maps prefixes to prefixes, so begins_with stays a
 * byte-range scan.
 */
#include "postgres.h"

#include "types/types.h"

/* The length of bytes escaped (each 0x00 as 0x00 0xFF), without the terminator. */
Size
DynKeyEscapedLen(const char *data, Size len)
{
	const char *p = data;
	const char *end = data + len;
	Size		n = len;

	while (p < end && (p = memchr(p, 0, end - p)) != NULL)
	{
		n++;
		p++;
	}
	return n;
}

/* Write bytes escaped (each 0x00 as 0x00 0xFF) at out; returns the end. */
char *
DynKeyEscape(char *out, const char *data, Size len)
{
	const char *p = data;
	const char *end = data + len;

	for (;;)
	{
		const char *z = p < end ? memchr(p, 0, end - p) : NULL;
		Size		chunk = (z ? z : end) - p;

		memcpy(out, p, chunk);
		out += chunk;
		if (z == NULL)
			return out;
		*out++ = 0;
		*out++ = (char) 0xFF;
		p = z + 1;
	}
}

/* Append S/B bytes, escaped when the encoding must be self-delimiting. */
static void
append_bytes(StringInfo buf, const char *data, int len, bool terminated)
{
	Size		n;

	if (!terminated)
	{
		appendBinaryStringInfo(buf, data, len);
		return;
	}
	n = DynKeyEscapedLen(data, len);
	enlargeStringInfo(buf, n);
	(void) DynKeyEscape(buf->data + buf->len, data, len);
	buf->len += n;
	buf->data[buf->len] = '\0';
}

/* Append the encoding of a scalar key value. */
void
DynKeyEncode(StringInfo buf, const DynValue *v, bool terminated)
{
	switch (v->type)
	{
		case DYN_N:
			DynNumberEncodeKey(buf, v->u.str.data, v->u.str.len);
			break;
		case DYN_S:
		case DYN_B:
			append_bytes(buf, v->u.str.data, v->u.str.len, terminated);
			if (terminated)
				appendBinaryStringInfo(buf, DYN_KEY_TERMINATOR, 2);
			break;
		default:
			elog(ERROR, "key values must be S, N or B");
	}
}

/* Append the encoding of a begins_with prefix (S or B, no terminator). */
void
DynKeyEncodePrefix(StringInfo buf, const DynValue *v, bool terminated)
{
	Assert(v->type == DYN_S || v->type == DYN_B);
	append_bytes(buf, v->u.str.data, v->u.str.len, terminated);
}
