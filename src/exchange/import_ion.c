/*
 * import_ion.c — reading the Ion text of DynamoDB exports and imports.
 *
 * No Ion library is packaged in Debian, so this is the subset of Ion text that
 * DynamoDB writes and reads (its export format, "DynamoDB data export to
 * Amazon S3: output format", Ion): the version marker $ion_1_0, a struct
 * {Item: {...}} per item, and inside it strings (short and long, with Ion's
 * escapes), decimals, integers and floats (N), booleans, nulls (any typed null
 * is NULL), blobs {{base64}} (B), structs (M), lists (L), and lists annotated
 * $dynamodb_SS / $dynamodb_NS / $dynamodb_BS (the sets); comments and
 * whitespace between values.  Other Ion (timestamps, clobs, s-expressions,
 * symbol tables) is refused with a message naming it.  Binary Ion:
 * import_ionbin.c.  The
 * result is the typed JSON of the item, checked afterwards as any item.
 */
#include "postgres.h"

#include "common/pg_compat.h"
#include "exchange/import.h"
#include "mb/pg_wchar.h"
#include "types/types.h"
#include "utils/jsonb.h"

/* Deepest nesting accepted (an item nests at most 32 levels; the wrapper adds 2). */
#define ION_MAX_DEPTH 40

typedef enum IonMode
{
	ION_TYPED,					/* an attribute value {"S": ...} */
	ION_SET_S,					/* an element of a string set: plain string */
	ION_SET_N,
	ION_SET_B
} IonMode;

typedef struct IonParser
{
	DynIonGetc	get;
	DynIonPeek	peek;
	void	   *arg;
	const char *error;
	JsonbParseState *st;
} IonParser;

#define GETC(p) ((p)->get((p)->arg))
#define PEEK(p) ((p)->peek((p)->arg))

/* Fail with a message (the first one wins). */
static bool
ion_fail(IonParser *p, const char *msg)
{
	if (p->error == NULL)
		p->error = msg;
	return false;
}

/* Skip whitespace and comments; the next byte (not taken) or -1. */
static int
skip_space(IonParser *p)
{
	for (;;)
	{
		int			c = PEEK(p);

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
		{
			GETC(p);
			continue;
		}
		if (c == '/')
		{
			GETC(p);
			c = PEEK(p);
			if (c == '/')
			{
				while ((c = GETC(p)) >= 0 && c != '\n')
					;
				continue;
			}
			if (c == '*')
			{
				int			prev = 0;

				GETC(p);
				while ((c = GETC(p)) >= 0 && !(prev == '*' && c == '/'))
					prev = c;
				if (c < 0)
				{
					ion_fail(p, "The Ion text has an unterminated comment");
					return -1;
				}
				continue;
			}
			ion_fail(p, "The Ion text has an unexpected '/'");
			return -1;
		}
		return c;
	}
}

/* Append a code point as UTF-8. */
static bool
append_codepoint(IonParser *p, StringInfo s, uint32 cp)
{
	unsigned char buf[8];

	if (cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
		return ion_fail(p, "The Ion text has an invalid escape");
	unicode_to_utf8(cp, buf);
	appendBinaryStringInfo(s, (char *) buf, pg_utf_mblen(buf));
	return true;
}

/* Read n hex digits. */
static bool
read_hex(IonParser *p, int n, uint32 *out)
{
	*out = 0;
	while (n-- > 0)
	{
		int			c = GETC(p);

		if (c >= '0' && c <= '9')
			*out = *out * 16 + (c - '0');
		else if (c >= 'a' && c <= 'f')
			*out = *out * 16 + (c - 'a' + 10);
		else if (c >= 'A' && c <= 'F')
			*out = *out * 16 + (c - 'A' + 10);
		else
			return ion_fail(p, "The Ion text has an invalid escape");
	}
	return true;
}

/* The body of a quoted text up to the closing quote (q), escapes decoded. */
static bool
read_quoted(IonParser *p, StringInfo s, int q, bool long_string)
{
	for (;;)
	{
		int			c = GETC(p);

		if (c < 0)
			return ion_fail(p, "The Ion text has an unterminated string");
		if (s->len > DYN_IMPORT_MAX_RECORD)
			return ion_fail(p, "The Ion value is larger than the maximum record size");
		if (c == q)
		{
			if (!long_string)
				return true;
			/* ''' ends a long string */
			if (PEEK(p) == '\'')
			{
				GETC(p);
				if (PEEK(p) == '\'')
				{
					GETC(p);
					return true;
				}
				appendStringInfoString(s, "''");
				continue;
			}
			appendStringInfoChar(s, '\'');
			continue;
		}
		if (!long_string && (c == '\n' || c == '\r'))
			return ion_fail(p, "The Ion text has a newline in a string");
		if (c != '\\')
		{
			appendStringInfoChar(s, (char) c);
			continue;
		}
		c = GETC(p);
		switch (c)
		{
			uint32		cp;

			case 'n':
				appendStringInfoChar(s, '\n');
				break;
			case 't':
				appendStringInfoChar(s, '\t');
				break;
			case 'r':
				appendStringInfoChar(s, '\r');
				break;
			case 'f':
				appendStringInfoChar(s, '\f');
				break;
			case 'b':
				appendStringInfoChar(s, '\b');
				break;
			case 'v':
				appendStringInfoChar(s, '\v');
				break;
			case 'a':
				appendStringInfoChar(s, '\a');
				break;
			case '0':
				appendStringInfoChar(s, '\0');
				break;
			case '"':
			case '\'':
			case '\\':
			case '/':
			case '?':
				appendStringInfoChar(s, (char) c);
				break;
			case '\n':
				break;			/* an escaped newline continues the text */
			case 'x':
				if (!read_hex(p, 2, &cp) || !append_codepoint(p, s, cp))
					return false;
				break;
			case 'u':
				if (!read_hex(p, 4, &cp))
					return false;
				if (cp >= 0xD800 && cp <= 0xDBFF)
				{
					uint32		lo;

					if (GETC(p) != '\\' || GETC(p) != 'u' || !read_hex(p, 4, &lo) || lo < 0xDC00 || lo > 0xDFFF)
						return ion_fail(p, "The Ion text has an invalid escape");
					cp = 0x10000 + ((cp - 0xD800) << 10) + (lo - 0xDC00);
				}
				if (!append_codepoint(p, s, cp))
					return false;
				break;
			case 'U':
				if (!read_hex(p, 8, &cp) || !append_codepoint(p, s, cp))
					return false;
				break;
			default:
				return ion_fail(p, "The Ion text has an invalid escape");
		}
	}
}

/* A string value "...". */
static bool
read_string(IonParser *p, StringInfo s)
{
	GETC(p);					/* the opening quote */
	return read_quoted(p, s, '"', false);
}

static bool
is_ident_char(int c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '$';
}

/* An identifier (symbol, keyword) or a number's text, taken while the characters fit. */
static void
read_token(IonParser *p, StringInfo s, bool number)
{
	for (;;)
	{
		int			c = PEEK(p);

		if (c < 0 || !(is_ident_char(c) || (number && (c == '.' || c == '-' || c == '+')) ||
					   (!number && c == '.')))
			return;
		if (s->len > 1024)
			return;
		appendStringInfoChar(s, (char) GETC(p));
	}
}

/* A field name or annotation: identifier, 'quoted symbol' or "string". */
static bool
read_symbol(IonParser *p, StringInfo s)
{
	int			c = skip_space(p);

	if (c == '\'')
	{
		GETC(p);
		if (PEEK(p) == '\'')
		{
			GETC(p);
			if (PEEK(p) == '\'')
			{
				GETC(p);
				return read_quoted(p, s, '\'', true);
			}
			return true;		/* '' : the empty symbol */
		}
		return read_quoted(p, s, '\'', false);
	}
	if (c == '"')
	{
		GETC(p);
		return read_quoted(p, s, '"', false);
	}
	if (c >= 0 && is_ident_char(c) && !(c >= '0' && c <= '9'))
	{
		read_token(p, s, false);
		return true;
	}
	return ion_fail(p, "The Ion text has no field name where one is expected");
}

/* Push a string jsonb value (as key, element or value), U+0000 escaped as stored strings are. */
static void
push_string(IonParser *p, JsonbIteratorToken tok, const char *s, int len)
{
	JsonbValue	v;
	int			outlen;
	const char *enc = DynNulEncode(s, len, &outlen);

	v.type = jbvString;
	v.val.string.val = pnstrdup(enc, outlen);	/* the parser reuses its buffers */
	v.val.string.len = outlen;
	pushJsonbValue(&p->st, tok, &v);
}

/* Begin a typed value {"T": */
static void
begin_typed(IonParser *p, const char *type)
{
	pushJsonbValue(&p->st, WJB_BEGIN_OBJECT, NULL);
	push_string(p, WJB_KEY, type, strlen(type));
}

/* A number's Ion text as DynamoDB number text (checked later): 1.5d3 -> 1.5E3, 103. -> 103. */
static bool
number_text(IonParser *p, const char *tok, StringInfo out)
{
	const char *s = tok;
	bool		digits = false;

	if (*s == '-')
		appendStringInfoChar(out, *s++);
	if (s[0] == '0' && (s[1] == 'x' || s[1] == 'X' || s[1] == 'b' || s[1] == 'B'))
	{
		/* hexadecimal and binary integers */
		int			base = (s[1] == 'x' || s[1] == 'X') ? 16 : 2;
		uint64		v = 0;

		for (s += 2; *s; s++)
		{
			int			d;

			if (*s == '_')
				continue;
			d = (*s >= '0' && *s <= '9') ? *s - '0' : (*s >= 'a' && *s <= 'f') ? *s - 'a' + 10 :
				(*s >= 'A' && *s <= 'F') ? *s - 'A' + 10 : 99;
			if (d >= base || v > (PG_UINT64_MAX >> 4))
				return ion_fail(p, "The Ion text has an invalid number");
			v = v * base + d;
			digits = true;
		}
		if (!digits)
			return ion_fail(p, "The Ion text has an invalid number");
		appendStringInfo(out, UINT64_FORMAT, v);
		return true;
	}
	for (; *s; s++)
	{
		if (*s >= '0' && *s <= '9')
		{
			appendStringInfoChar(out, *s);
			digits = true;
		}
		else if (*s == '_')
			continue;
		else if (*s == '.')
		{
			/* "103." is an integer-valued decimal */
			if (s[1] == '\0' || s[1] == 'd' || s[1] == 'D' || s[1] == 'e' || s[1] == 'E')
				continue;
			appendStringInfoChar(out, '.');
		}
		else if (*s == 'd' || *s == 'D' || *s == 'e' || *s == 'E')
		{
			appendStringInfoChar(out, 'E');
			if (s[1] == '+' || s[1] == '-')
				appendStringInfoChar(out, *++s);
		}
		else
			return ion_fail(p, "The Ion text has an invalid number or an unsupported value (timestamp)");
	}
	if (!digits)
		return ion_fail(p, "The Ion text has an invalid number");
	return true;
}

static bool parse_value(IonParser *p, IonMode mode, int depth);

/* A string value in a mode: {"S": s}, or an element of a string set. */
static bool
emit_string(IonParser *p, IonMode mode, StringInfo tok)
{
	if (mode == ION_TYPED)
	{
		begin_typed(p, "S");
		push_string(p, WJB_VALUE, tok->data, tok->len);
		pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
		return true;
	}
	if (mode != ION_SET_S)
		return ion_fail(p, "The Ion text has a set element of another type than its set");
	push_string(p, WJB_ELEM, tok->data, tok->len);
	return true;
}

/* The members of a struct (after '{'): field names and values, as a jsonb object being built. */
static bool
parse_struct_fields(IonParser *p, IonMode member_mode, int depth)
{
	StringInfoData name;

	initStringInfo(&name);
	for (;;)
	{
		int			c = skip_space(p);

		if (c == '}')
		{
			GETC(p);
			return true;
		}
		resetStringInfo(&name);
		if (!read_symbol(p, &name))
			return false;
		if (skip_space(p) != ':')
			return ion_fail(p, "The Ion text has no ':' after a field name");
		GETC(p);
		push_string(p, WJB_KEY, name.data, name.len);
		if (!parse_value(p, member_mode, depth + 1))
			return false;
		c = skip_space(p);
		if (c == ',')
			GETC(p);
		else if (c != '}')
			return ion_fail(p, "The Ion text has no ',' or '}' after a struct field");
	}
}

/* The elements of a list (after '['). */
static bool
parse_list_elems(IonParser *p, IonMode elem_mode, int depth)
{
	for (;;)
	{
		int			c = skip_space(p);

		if (c == ']')
		{
			GETC(p);
			return true;
		}
		if (!parse_value(p, elem_mode, depth + 1))
			return false;
		c = skip_space(p);
		if (c == ',')
			GETC(p);
		else if (c != ']')
			return ion_fail(p, "The Ion text has no ',' or ']' after a list element");
	}
}

/* A blob {{base64}} (after "{{"): its base64 text, whitespace removed. */
static bool
read_blob(IonParser *p, StringInfo s)
{
	for (;;)
	{
		int			c = GETC(p);

		if (c < 0)
			return ion_fail(p, "The Ion text has an unterminated blob");
		if (c == '}')
		{
			if (GETC(p) != '}')
				return ion_fail(p, "The Ion text has an unterminated blob");
			return true;
		}
		if (c == '"' || c == '\'')
			return ion_fail(p, "The Ion text has a clob, which DynamoDB does not use");
		if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
			continue;
		if (!(is_ident_char(c) || c == '+' || c == '/' || c == '=') || c == '_' || c == '$')
			return ion_fail(p, "The Ion text has an invalid blob");
		if (s->len > DYN_IMPORT_MAX_RECORD)
			return ion_fail(p, "The Ion value is larger than the maximum record size");
		appendStringInfoChar(s, (char) c);
	}
}

/* One value (with its annotations) in a mode. */
static bool
parse_value(IonParser *p, IonMode mode, int depth)
{
	int			c;
	StringInfoData tok;
	IonMode		set_mode = ION_TYPED;

	if (depth > ION_MAX_DEPTH)
		return ion_fail(p, "The Ion value nests too deeply");
	initStringInfo(&tok);
	c = skip_space(p);
	/* annotations: symbol '::' (only the set annotations mean something) */
	for (;;)
	{
		if (c < 0)
			return ion_fail(p, "The Ion text ends inside a value");
		if (!(c == '\'' || (is_ident_char(c) && !(c >= '0' && c <= '9'))))
			break;
		resetStringInfo(&tok);
		if (c == '\'')
		{
			GETC(p);
			if (PEEK(p) == '\'')
			{
				GETC(p);
				if (PEEK(p) == '\'')
				{
					/* a long string (three quotes); the next ones concatenate */
					GETC(p);
					if (!read_quoted(p, &tok, '\'', true))
						return false;
					while (skip_space(p) == '\'')
					{
						GETC(p);
						if (GETC(p) != '\'' || GETC(p) != '\'')
							return ion_fail(p, "The Ion text has a symbol where a string continues");
						if (!read_quoted(p, &tok, '\'', true))
							return false;
					}
					return emit_string(p, mode, &tok);
				}
				/* two quotes: the empty symbol */
			}
			else if (!read_quoted(p, &tok, '\'', false))
				return false;
		}
		else
			read_token(p, &tok, false);
		c = skip_space(p);
		if (c == ':')
		{
			GETC(p);
			if (GETC(p) != ':')
				return ion_fail(p, "The Ion text has a single ':' after a symbol");
			if (strcmp(tok.data, "$dynamodb_SS") == 0)
				set_mode = ION_SET_S;
			else if (strcmp(tok.data, "$dynamodb_NS") == 0)
				set_mode = ION_SET_N;
			else if (strcmp(tok.data, "$dynamodb_BS") == 0)
				set_mode = ION_SET_B;
			c = skip_space(p);
			continue;
		}
		/* a bare symbol or keyword: the value itself */
		if (mode != ION_TYPED)
			return ion_fail(p, "The Ion text has a set element that is not a string, number or blob");
		if (strcmp(tok.data, "true") == 0 || strcmp(tok.data, "false") == 0)
		{
			JsonbValue	b;

			begin_typed(p, "BOOL");
			b.type = jbvBool;
			b.val.boolean = tok.data[0] == 't';
			pushJsonbValue(&p->st, WJB_VALUE, &b);
			pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
			return true;
		}
		if (strcmp(tok.data, "null") == 0 || strncmp(tok.data, "null.", 5) == 0)
		{
			JsonbValue	b;

			begin_typed(p, "NULL");
			b.type = jbvBool;
			b.val.boolean = true;
			pushJsonbValue(&p->st, WJB_VALUE, &b);
			pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
			return true;
		}
		if (strcmp(tok.data, "nan") == 0)
			return ion_fail(p, "The Ion text has a float DynamoDB cannot store (nan or infinity)");
		return ion_fail(p, "The Ion text has a symbol value, which DynamoDB does not use");
	}
	if (set_mode != ION_TYPED)
	{
		/* $dynamodb_SS::[...] */
		const char *type = set_mode == ION_SET_S ? "SS" : set_mode == ION_SET_N ? "NS" : "BS";

		if (mode != ION_TYPED || c != '[')
			return ion_fail(p, "The Ion text has a set annotation on a value that is not a list");
		GETC(p);
		begin_typed(p, type);
		pushJsonbValue(&p->st, WJB_BEGIN_ARRAY, NULL);
		if (!parse_list_elems(p, set_mode, depth))
			return false;
		pushJsonbValue(&p->st, WJB_END_ARRAY, NULL);
		pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
		return true;
	}
	if (c == '"')
	{
		resetStringInfo(&tok);
		if (!read_string(p, &tok))
			return false;
		return emit_string(p, mode, &tok);
	}
	if (c == '-' || (c >= '0' && c <= '9') || c == '+')
	{
		StringInfoData num;

		if (c == '+')
			return ion_fail(p, "The Ion text has a float DynamoDB cannot store (nan or infinity)");
		resetStringInfo(&tok);
		read_token(p, &tok, true);
		if (strcmp(tok.data, "-inf") == 0)
			return ion_fail(p, "The Ion text has a float DynamoDB cannot store (nan or infinity)");
		initStringInfo(&num);
		if (!number_text(p, tok.data, &num))
			return false;
		if (mode == ION_TYPED)
		{
			begin_typed(p, "N");
			push_string(p, WJB_VALUE, num.data, num.len);
			pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
			return true;
		}
		if (mode != ION_SET_N)
			return ion_fail(p, "The Ion text has a set element of another type than its set");
		push_string(p, WJB_ELEM, num.data, num.len);
		return true;
	}
	if (c == '{')
	{
		GETC(p);
		if (PEEK(p) == '{')
		{
			GETC(p);
			resetStringInfo(&tok);
			if (!read_blob(p, &tok))
				return false;
			if (mode == ION_TYPED)
			{
				begin_typed(p, "B");
				push_string(p, WJB_VALUE, tok.data, tok.len);
				pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
				return true;
			}
			if (mode != ION_SET_B)
				return ion_fail(p, "The Ion text has a set element of another type than its set");
			push_string(p, WJB_ELEM, tok.data, tok.len);
			return true;
		}
		if (mode != ION_TYPED)
			return ion_fail(p, "The Ion text has a set element that is not a string, number or blob");
		begin_typed(p, "M");
		pushJsonbValue(&p->st, WJB_BEGIN_OBJECT, NULL);
		if (!parse_struct_fields(p, ION_TYPED, depth))
			return false;
		pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
		pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
		return true;
	}
	if (c == '[')
	{
		if (mode != ION_TYPED)
			return ion_fail(p, "The Ion text has a set element that is not a string, number or blob");
		GETC(p);
		begin_typed(p, "L");
		pushJsonbValue(&p->st, WJB_BEGIN_ARRAY, NULL);
		if (!parse_list_elems(p, ION_TYPED, depth))
			return false;
		pushJsonbValue(&p->st, WJB_END_ARRAY, NULL);
		pushJsonbValue(&p->st, WJB_END_OBJECT, NULL);
		return true;
	}
	if (c == '(')
		return ion_fail(p, "The Ion text has an s-expression, which DynamoDB does not use");
	return ion_fail(p, "The Ion text has an unexpected character");
}

/*
 * Read one top-level value {Item: {...}} and return the item's typed JSON.
 * Version markers ($ion_1_0) before it are skipped; *eof at the end of the
 * object; NULL and *error for a malformed value.
 */
Jsonb *
DynIonReadItem(DynIonGetc get, DynIonPeek peek, void *arg, bool *eof, const char **error)
{
	IonParser	p = {get, peek, arg, NULL, NULL};
	StringInfoData name;
	int			c;
	bool		have_item = false;
	JsonbValue *res = NULL;

	*eof = false;
	*error = NULL;
	initStringInfo(&name);
	for (;;)
	{
		c = skip_space(&p);
		if (p.error)
		{
			*error = p.error;
			return NULL;
		}
		if (c < 0)
		{
			*eof = true;
			return NULL;
		}
		if (c == '$')
		{
			resetStringInfo(&name);
			read_token(&p, &name, false);
			if (strcmp(name.data, "$ion_1_0") != 0)
			{
				*error = "The Ion text has a top-level symbol other than $ion_1_0";
				return NULL;
			}
			continue;
		}
		break;
	}
	if (c != '{')
	{
		*error = "The Ion value is not a struct {Item: {...}}";
		return NULL;
	}
	GETC(&p);
	/* {Item: {...}}: the item's fields are pushed as a jsonb object name -> AttributeValue */
	for (;;)
	{
		c = skip_space(&p);
		if (c == '}')
		{
			GETC(&p);
			break;
		}
		resetStringInfo(&name);
		if (!read_symbol(&p, &name) || skip_space(&p) != ':')
		{
			*error = p.error ? p.error : "The Ion text has no ':' after a field name";
			return NULL;
		}
		GETC(&p);
		if (strcmp(name.data, "Item") != 0 || have_item || skip_space(&p) != '{')
		{
			*error = p.error ? p.error : "The Ion value is not a struct {Item: {...}}";
			return NULL;
		}
		GETC(&p);
		have_item = true;
		pushJsonbValue(&p.st, WJB_BEGIN_OBJECT, NULL);
		if (!parse_struct_fields(&p, ION_TYPED, 1))
		{
			*error = p.error;
			return NULL;
		}
		res = pushJsonbValue(&p.st, WJB_END_OBJECT, NULL);
		c = skip_space(&p);
		if (c == ',')
			GETC(&p);
		else if (c != '}')
		{
			*error = p.error ? p.error : "The Ion text has no ',' or '}' after a struct field";
			return NULL;
		}
	}
	if (!have_item)
	{
		*error = "The Ion value has no Item";
		return NULL;
	}
	return JsonbValueToJsonb(res);
}
