/*
 * nulstr.c — strings containing U+0000 (which jsonb cannot hold).
 *
 * DynamoDB accepts U+0000 in S and SS values and in map keys; PostgreSQL's
 * jsonb refuses "\u0000".  Inside jsonb (requests, stored items, responses)
 * dynindex writes such strings with a reversible escape: U+0000 becomes
 * ESC '0' and ESC itself becomes ESC 'E', ESC being U+E000 (a private-use
 * character, UTF-8 EE 80 80).  Every AttributeValue is decoded when it is
 * parsed into a DynValue (types/attrval.c) and encoded again when it is
 * written out (DynPushJsonbString), so everything in between — key
 * encoding and order, sizes, expressions, comparisons — sees the real string.
 *
 * At the edges: dynindex.api_text(operation, request text) rewrites
 * "\u0000" (and ESC) in the request's JSON text into the escape before the
 * jsonb parse and turns the response's escapes back into "\u0000"; the jsonb
 * entry point dynindex.api escapes ESC in its request and unescapes it in its
 * response (a NUL stays ESC '0' there: jsonb cannot hold it).
 */
#include "postgres.h"

#include "lib/stringinfo.h"
#include "utils/jsonb.h"

#include "types/types.h"

#define ESC "\xEE\x80\x80"
#define ESC_LEN 3

/* Does s contain ESC? */
static bool
has_esc(const char *s, int len)
{
	const char *p = s;
	const char *end = s + len;

	while (p + ESC_LEN <= end && (p = memchr(p, 0xEE, end - p)) != NULL)
	{
		if (p + ESC_LEN <= end && memcmp(p, ESC, ESC_LEN) == 0)
			return true;
		p++;
	}
	return false;
}

/* Decode an escaped jsonb string; returns s itself when there is nothing to decode. */
const char *
DynNulDecode(const char *s, int len, int *outlen)
{
	StringInfoData buf;
	int			i = 0;

	*outlen = len;
	if (!has_esc(s, len))
		return s;
	initStringInfo(&buf);
	while (i < len)
	{
		if (i + ESC_LEN < len && memcmp(s + i, ESC, ESC_LEN) == 0 &&
			(s[i + ESC_LEN] == '0' || s[i + ESC_LEN] == 'E'))
		{
			if (s[i + ESC_LEN] == '0')
				appendStringInfoChar(&buf, '\0');
			else
				appendBinaryStringInfo(&buf, ESC, ESC_LEN);
			i += ESC_LEN + 1;
		}
		else
			appendStringInfoChar(&buf, s[i++]);
	}
	*outlen = buf.len;
	return buf.data;
}

/* Encode a string for jsonb; returns s itself when there is nothing to encode. */
const char *
DynNulEncode(const char *s, int len, int *outlen)
{
	StringInfoData buf;
	int			i = 0;

	*outlen = len;
	if (memchr(s, '\0', len) == NULL && !has_esc(s, len))
		return s;
	initStringInfo(&buf);
	while (i < len)
	{
		if (s[i] == '\0')
		{
			appendBinaryStringInfo(&buf, ESC "0", ESC_LEN + 1);
			i++;
		}
		else if (i + ESC_LEN <= len && memcmp(s + i, ESC, ESC_LEN) == 0)
		{
			appendBinaryStringInfo(&buf, ESC "E", ESC_LEN + 1);
			i += ESC_LEN;
		}
		else
			appendStringInfoChar(&buf, s[i++]);
	}
	*outlen = buf.len;
	return buf.data;
}

/* Rewrite every string (keys and values) of a jsonb with fn; the same jsonb when none changes. */
static Jsonb *
rewrite_jsonb(Jsonb *jb, const char *(*fn) (const char *, int, int *))
{
	JsonbIterator *it;
	JsonbValue	v;
	JsonbIteratorToken tok;
	JsonbParseState *st = NULL;
	JsonbValue *res = NULL;

	if (!has_esc(VARDATA(jb), VARSIZE(jb) - VARHDRSZ))
		return jb;
	it = JsonbIteratorInit(&jb->root);
	while ((tok = JsonbIteratorNext(&it, &v, false)) != WJB_DONE)
	{
		if ((tok == WJB_KEY || tok == WJB_VALUE || tok == WJB_ELEM) && v.type == jbvString)
		{
			int			n;
			const char *s = fn(v.val.string.val, v.val.string.len, &n);

			v.val.string.val = (char *) s;
			v.val.string.len = n;
		}
		/* containers' begin tokens keep their value (a raw scalar stays one) */
		res = pushJsonbValue(&st, tok, (tok == WJB_END_ARRAY || tok == WJB_END_OBJECT) ? NULL : &v);
	}
	return JsonbValueToJsonb(res);
}

/* ESC -> ESC 'E' only (a jsonb request holds no NUL to encode). */
static const char *
escape_esc(const char *s, int len, int *outlen)
{
	return DynNulEncode(s, len, outlen);
}

/* ESC 'E' -> ESC only; ESC '0' stays (jsonb cannot hold U+0000). */
static const char *
unescape_esc(const char *s, int len, int *outlen)
{
	StringInfoData buf;
	int			i = 0;

	*outlen = len;
	if (!has_esc(s, len))
		return s;
	initStringInfo(&buf);
	while (i < len)
	{
		if (i + ESC_LEN < len && memcmp(s + i, ESC, ESC_LEN) == 0 && s[i + ESC_LEN] == 'E')
		{
			appendBinaryStringInfo(&buf, ESC, ESC_LEN);
			i += ESC_LEN + 1;
		}
		else
			appendStringInfoChar(&buf, s[i++]);
	}
	*outlen = buf.len;
	return buf.data;
}

/* A jsonb request of dynindex.api: escape ESC in its strings. */
Jsonb *
DynNulEscapeRequest(Jsonb *jb)
{
	return rewrite_jsonb(jb, escape_esc);
}

/* A jsonb response of dynindex.api: ESC 'E' back to ESC. */
Jsonb *
DynNulUnescapeResponse(Jsonb *jb)
{
	return rewrite_jsonb(jb, unescape_esc);
}

/* Is c a hex digit? */
static bool
is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/*
 * A request's JSON text -> JSON text jsonb accepts: "\u0000" becomes
 * ESC '0', ESC (raw or "\ue000") becomes ESC 'E'.  Backslash pairs are
 * copied as they are, so "\\u0000" stays the six characters it is.
 */
char *
DynNulJsonTextIn(const char *s, int len)
{
	StringInfoData buf;
	int			i = 0;

	initStringInfo(&buf);
	while (i < len)
	{
		if (s[i] == '\\' && i + 1 < len)
		{
			if (s[i + 1] == 'u' && i + 5 < len && is_hex(s[i + 2]) && is_hex(s[i + 3]) &&
				is_hex(s[i + 4]) && is_hex(s[i + 5]))
			{
				if (strncmp(s + i + 2, "0000", 4) == 0)
				{
					appendBinaryStringInfo(&buf, ESC "0", ESC_LEN + 1);
					i += 6;
					continue;
				}
				if (pg_strncasecmp(s + i + 2, "e000", 4) == 0)
				{
					appendBinaryStringInfo(&buf, ESC "E", ESC_LEN + 1);
					i += 6;
					continue;
				}
			}
			appendBinaryStringInfo(&buf, s + i, 2);
			i += 2;
		}
		else if (i + ESC_LEN <= len && memcmp(s + i, ESC, ESC_LEN) == 0)
		{
			appendBinaryStringInfo(&buf, ESC "E", ESC_LEN + 1);
			i += ESC_LEN;
		}
		else
			appendStringInfoChar(&buf, s[i++]);
	}
	return buf.data;
}

/* A response's JSON text (jsonb output) -> JSON text with "\u0000" and ESC restored. */
char *
DynNulJsonTextOut(const char *s)
{
	StringInfoData buf;
	int			len = strlen(s);
	int			i = 0;

	if (!has_esc(s, len))
		return (char *) s;
	initStringInfo(&buf);
	while (i < len)
	{
		if (i + ESC_LEN < len && memcmp(s + i, ESC, ESC_LEN) == 0 &&
			(s[i + ESC_LEN] == '0' || s[i + ESC_LEN] == 'E'))
		{
			if (s[i + ESC_LEN] == '0')
				appendStringInfoString(&buf, "\\u0000");
			else
				appendBinaryStringInfo(&buf, ESC, ESC_LEN);
			i += ESC_LEN + 1;
		}
		else
			appendStringInfoChar(&buf, s[i++]);
	}
	return buf.data;
}
