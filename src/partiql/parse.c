/*
 * parse.c — PartiQL for DynamoDB: lexer and recursive-descent parser.
 *
 * The grammar is the subset DynamoDB runs: SELECT, INSERT INTO ... VALUE,
 * UPDATE ... SET/REMOVE, DELETE FROM and EXISTS(SELECT ...).  Literals are
 * turned into DynamoDB's typed JSON while parsing and `?` placeholders are
 * bound to the request's Parameters in textual order.  Errors carry
 * DynamoDB's text: "Statement wasn't well formed, can't be processed: <detail>"
 * with the parser's detail (details pinned against DynamoDB, October 2026:
 * "Unexpected token after expression", "Unexpected term", "Unexpected
 * keyword", "Unexpected operator", "Missing right-hand side expression of
 * infix operator", "Expected identifier for simple path", "Expected type
 * name"), and the semantic messages of DynamoDB's PartiQL front end.
 */
#include "postgres.h"

#include "common/hashfn.h"
#include "utils/builtins.h"
#include "utils/formatting.h"
#include "utils/json.h"
#include "utils/memutils.h"

#include "common/errors.h"
#include "partiql/partiql.h"
#include "types/types.h"

#define NOT_WELL_FORMED "Statement wasn't well formed, can't be processed: "

typedef enum TokKind
{
	T_EOF,
	T_IDENT,					/* bare word (maybe a keyword) */
	T_QIDENT,					/* "quoted" */
	T_STRING,					/* 'text' */
	T_NUMBER,
	T_PARAM,					/* ? */
	T_PUNCT,					/* ( ) [ ] { } , . : * + - ; */
	T_OP						/* = <> != < <= > >= << >> */
} TokKind;

typedef struct Tok
{
	TokKind		kind;
	char	   *text;			/* identifier/string contents, number, punctuation */
} Tok;

typedef struct Parser
{
	Tok		   *toks;
	int			ntoks;
	int			pos;
	const PqParam *params;
	int			nparams;
	int			nbound;
	int			depth;			/* nesting of parentheses, collections, calls, NOT */
	PqNode	  **bound;			/* the nodes of the `?` bound so far (nparams of them) */
} Parser;

/*
 * Nesting limit (dynindex's: DynamoDB documents none).  Statements are at
 * most 8192 characters, but 4000 '(' would still recurse deep enough to
 * threaten the backend's stack.
 */
#define MAX_NESTING 256

/*
 * PartiQL's reserved words (SQL-92's and PartiQL's own): not usable as bare
 * names; a double-quoted name may be anything.  Sorted for bsearch.
 */
static const char *const reserved[] = {
	"absolute", "action", "add", "all", "allocate", "alter", "and", "any", "are", "as",
	"asc", "assertion", "at", "authorization", "avg", "bag", "begin", "between", "bit",
	"bit_length", "blob", "bool", "boolean", "both", "by", "can_cast", "can_lossless_cast",
	"cascade", "cascaded", "case", "cast", "catalog", "char", "char_length", "character",
	"character_length", "check", "clob", "close", "coalesce", "collate", "collation",
	"column", "commit", "connect", "connection", "constraint", "constraints", "continue",
	"convert", "corresponding", "count", "create", "cross", "current", "current_date",
	"current_time", "current_timestamp", "current_user", "cursor", "date", "date_add",
	"date_diff", "day", "deallocate", "dec", "decimal", "declare", "default", "deferrable",
	"deferred", "delete", "desc", "describe", "descriptor", "diagnostics", "disconnect",
	"distinct", "domain", "double", "drop", "else", "end", "end-exec", "escape", "except",
	"exception", "exec", "execute", "exists", "external", "extract", "false", "fetch",
	"first", "float", "for", "foreign", "found", "from", "full", "get", "global", "go",
	"goto", "grant", "group", "having", "hour", "identity", "immediate", "in", "index",
	"indicator", "initially", "inner", "input", "insensitive", "insert", "int", "integer",
	"integer2", "integer4", "integer8", "intersect", "interval", "into", "is", "isolation",
	"join", "key", "language", "last", "leading", "left", "let", "level", "like", "limit",
	"list", "local", "lower", "match", "max", "min", "minute", "missing", "modified",
	"module", "month", "names", "national", "natural", "nchar", "new", "next", "no",
	"not", "null", "nullif", "numeric", "octet_length", "of", "offset", "old", "on",
	"only", "open", "option", "or", "order", "outer", "output", "overlaps", "pad",
	"partial", "pivot", "position", "precision", "prepare", "preserve", "primary", "prior",
	"privileges", "procedure", "public", "read", "real", "references", "relative",
	"remove", "restrict", "returning", "revoke", "right", "rollback", "rows", "schema",
	"scroll", "second", "section", "select", "session", "session_user", "set", "sexp",
	"size", "smallint", "some", "space", "sql", "sqlcode", "sqlerror", "sqlstate",
	"string", "struct", "substring", "sum", "symbol", "system_user", "table", "temporary",
	"then", "time", "timestamp", "timezone_hour", "timezone_minute", "to", "trailing",
	"transaction", "translate", "translation", "trim", "true", "tuple", "union", "unique",
	"unknown", "unpivot", "update", "upper", "upsert", "usage", "user", "using", "value",
	"values", "varchar", "varying", "view", "when", "whenever", "where", "with", "work",
	"write", "year", "zone"
};

pg_noreturn static void malformed(const char *detail);

/* Raise "Statement wasn't well formed, can't be processed: <detail>". */
static void
malformed(const char *detail)
{
	DynValidationError(NOT_WELL_FORMED "%s", detail);
}

/* Compare for bsearch over reserved[]. */
static int
cmp_word(const void *a, const void *b)
{
	return strcmp((const char *) a, *(const char *const *) b);
}

/* Is a bare word one of PartiQL's reserved words (case-insensitive)? */
static bool
is_reserved(const char *word)
{
	char	   *lower = asc_tolower(word, strlen(word));

	return bsearch(lower, reserved, lengthof(reserved), sizeof(char *), cmp_word) != NULL;
}

/* ---------------------------------------------------------------- lexer */

/* Append one token. */
static void
add_tok(Tok **toks, int *n, int *cap, TokKind kind, char *text)
{
	if (*n >= *cap)
	{
		*cap *= 2;
		*toks = repalloc(*toks, sizeof(Tok) * *cap);
	}
	(*toks)[*n].kind = kind;
	(*toks)[*n].text = text;
	(*n)++;
}

/* Can c continue a bare word? */
static bool
word_char(unsigned char c)
{
	return isalnum(c) || c == '_' || c == '$' || c >= 0x80;
}

/* Split the statement into tokens (comments and a final ';' dropped). */
static Tok *
lex(const char *s, int len, int *ntoks)
{
	int			cap = 32;
	int			n = 0;
	Tok		   *toks = palloc(sizeof(Tok) * cap);
	int			i = 0;

	while (i < len)
	{
		unsigned char c = s[i];

		if (c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v')
		{
			i++;
			continue;
		}
		if (c == '-' && i + 1 < len && s[i + 1] == '-')
		{
			while (i < len && s[i] != '\n')
				i++;
			continue;
		}
		if (c == '/' && i + 1 < len && s[i + 1] == '*')
		{
			i += 2;
			while (i + 1 < len && !(s[i] == '*' && s[i + 1] == '/'))
				i++;
			if (i + 1 >= len)
				malformed("");
			i += 2;
			continue;
		}
		if (c == '\'' || c == '"')
		{
			StringInfoData b;

			initStringInfo(&b);
			i++;
			for (;;)
			{
				if (i >= len)
					malformed("");
				if ((unsigned char) s[i] == c)
				{
					if (i + 1 < len && (unsigned char) s[i + 1] == c)
					{
						appendStringInfoChar(&b, c);
						i += 2;
						continue;
					}
					i++;
					break;
				}
				if (s[i] == '\0')
					malformed("");
				appendStringInfoChar(&b, s[i]);
				i++;
			}
			add_tok(&toks, &n, &cap, c == '\'' ? T_STRING : T_QIDENT, b.data);
			continue;
		}
		if (isdigit(c) || (c == '.' && i + 1 < len && isdigit((unsigned char) s[i + 1])))
		{
			int			start = i;

			while (i < len && isdigit((unsigned char) s[i]))
				i++;
			if (i < len && s[i] == '.')
			{
				i++;
				while (i < len && isdigit((unsigned char) s[i]))
					i++;
			}
			if (i < len && (s[i] == 'e' || s[i] == 'E'))
			{
				int			j = i + 1;

				if (j < len && (s[j] == '+' || s[j] == '-'))
					j++;
				if (j < len && isdigit((unsigned char) s[j]))
				{
					i = j;
					while (i < len && isdigit((unsigned char) s[i]))
						i++;
				}
			}
			add_tok(&toks, &n, &cap, T_NUMBER, pnstrdup(s + start, i - start));
			continue;
		}
		if (word_char(c) && !isdigit(c))
		{
			int			start = i;

			while (i < len && word_char((unsigned char) s[i]))
				i++;
			add_tok(&toks, &n, &cap, T_IDENT, pnstrdup(s + start, i - start));
			continue;
		}
		if (c == '?')
		{
			add_tok(&toks, &n, &cap, T_PARAM, "?");
			i++;
			continue;
		}
		if (c == '<' || c == '>' || c == '!' || c == '=')
		{
			const char *two = i + 1 < len ? pnstrdup(s + i, 2) : "";

			if (strcmp(two, "<=") == 0 || strcmp(two, ">=") == 0 || strcmp(two, "<>") == 0 ||
				strcmp(two, "!=") == 0 || strcmp(two, "<<") == 0 || strcmp(two, ">>") == 0)
			{
				add_tok(&toks, &n, &cap, T_OP, pstrdup(two));
				i += 2;
				continue;
			}
			if (c == '!')
				malformed("");
			add_tok(&toks, &n, &cap, T_OP, pnstrdup(s + i, 1));
			i++;
			continue;
		}
		if (strchr("()[]{},.:*+-;", c) && c != '\0')
		{
			add_tok(&toks, &n, &cap, T_PUNCT, pnstrdup(s + i, 1));
			i++;
			continue;
		}
		/* '#', '%', '/', '@', '|', '&', '\\', '`', '^', '~' and control characters */
		malformed("");
	}
	/* one ';' may end the statement */
	if (n > 0 && toks[n - 1].kind == T_PUNCT && strcmp(toks[n - 1].text, ";") == 0)
		n--;
	add_tok(&toks, &n, &cap, T_EOF, "");
	*ntoks = n;
	return toks;
}

/* ---------------------------------------------------------------- token helpers */

/* The current token. */
static Tok *
peek(Parser *p)
{
	return &p->toks[p->pos];
}

/* The token n ahead. */
static Tok *
peek_at(Parser *p, int n)
{
	return p->pos + n < p->ntoks ? &p->toks[p->pos + n] : &p->toks[p->ntoks - 1];
}

/* Is the current token the keyword kw (case-insensitive)? */
static bool
is_kw(Parser *p, const char *kw)
{
	Tok		   *t = peek(p);

	return t->kind == T_IDENT && pg_strcasecmp(t->text, kw) == 0;
}

/* Consume the keyword kw if it is next. */
static bool
eat_kw(Parser *p, const char *kw)
{
	if (!is_kw(p, kw))
		return false;
	p->pos++;
	return true;
}

/* Is the current token the punctuation or operator s? */
static bool
is_sym(Parser *p, const char *s)
{
	Tok		   *t = peek(p);

	return (t->kind == T_PUNCT || t->kind == T_OP) && strcmp(t->text, s) == 0;
}

/* Consume the punctuation or operator s if it is next. */
static bool
eat_sym(Parser *p, const char *s)
{
	if (!is_sym(p, s))
		return false;
	p->pos++;
	return true;
}

pg_noreturn static void unexpected(Parser *p);

/* Report the current token where something else was expected. */
static void
unexpected(Parser *p)
{
	Tok		   *t = peek(p);

	if (t->kind == T_EOF)
		malformed("Unexpected term");
	if (t->kind == T_IDENT && is_reserved(t->text))
		malformed("Unexpected keyword");
	if (t->kind == T_OP || (t->kind == T_PUNCT && strchr("+-*", t->text[0])))
		malformed("Unexpected operator");
	malformed("Unexpected term");
}

/* Require the keyword kw. */
static void
expect_kw(Parser *p, const char *kw)
{
	if (!eat_kw(p, kw))
		unexpected(p);
}

/* Require the symbol s. */
static void
expect_sym(Parser *p, const char *s)
{
	if (!eat_sym(p, s))
		unexpected(p);
}

/* ---------------------------------------------------------------- nodes */

/* A new node of a kind. */
static PqNode *
make_node(PqNodeKind kind)
{
	PqNode	   *n = palloc0(sizeof(PqNode));

	n->kind = kind;
	return n;
}

/* A node with two operands. */
static PqNode *
make_binary(PqNodeKind kind, int op, PqNode *a, PqNode *b)
{
	PqNode	   *n = make_node(kind);

	n->op = op;
	n->nargs = 2;
	n->args = palloc(sizeof(PqNode *) * 2);
	n->args[0] = a;
	n->args[1] = b;
	return n;
}

/* A value node from typed JSON. */
static PqNode *
make_value(char *json, const char *vtype)
{
	PqNode	   *n = make_node(PQ_VALUE);

	n->json = json;
	n->vtype = vtype;
	return n;
}

/* Append a child to a list-like node. */
static void
add_arg(PqNode *n, PqNode *child, int *cap)
{
	if (n->nargs >= *cap)
	{
		*cap = *cap ? *cap * 2 : 4;
		n->args = n->args ? repalloc(n->args, sizeof(PqNode *) * *cap) : palloc(sizeof(PqNode *) * *cap);
		if (n->kind == PQ_TUPLE)
			n->keys = n->keys ? repalloc(n->keys, sizeof(char *) * *cap) : palloc(sizeof(char *) * *cap);
	}
	n->args[n->nargs++] = child;
}

/* Append s as a JSON string literal. */
void
PqAppendJsonString(StringInfo buf, const char *s)
{
	escape_json(buf, s);
}

/* A number literal (with an optional minus) as an N value. */
static PqNode *
number_value(const char *text, bool negative)
{
	char	   *full = negative ? psprintf("-%s", text) : (char *) text;
	char	   *canon;
	const char *msg = DynNumberCanonicalize(full, strlen(full), &canon);
	StringInfoData b;

	if (msg)
	{
		/* reported where the value is used, with its place: "... under root.m.x" */
		PqNode	   *n = make_value(NULL, "N");

		n->name = pstrdup(msg);
		return n;
	}
	initStringInfo(&b);
	appendStringInfoString(&b, "{\"N\":");
	escape_json(&b, canon);
	appendStringInfoChar(&b, '}');
	return make_value(b.data, "N");
}

/* ---------------------------------------------------------------- expressions */

static PqNode *parse_expr(Parser *p);
static PqNode *parse_additive(Parser *p);

/* Enter one level of nesting. */
static void
nest(Parser *p)
{
	if (++p->depth > MAX_NESTING)
		malformed("Expressions are nested more than 256 levels deep");
}

/* A name: a quoted identifier or a bare word that is not reserved. */
static char *
parse_name(Parser *p)
{
	Tok		   *t = peek(p);

	if (t->kind == T_QIDENT)
	{
		p->pos++;
		return t->text;
	}
	if (t->kind == T_IDENT && !is_reserved(t->text))
	{
		p->pos++;
		return t->text;
	}
	unexpected(p);
}

/* The rest of a path after its first name: .name, [n], ['name']. */
static PqNode *
parse_path_rest(Parser *p, char *first)
{
	PqNode	   *n = make_node(PQ_PATH);
	int			cap = 4;

	n->path = palloc(sizeof(PqPathElem) * cap);
	n->path[0].name = first;
	n->npath = 1;
	for (;;)
	{
		PqPathElem e = {0};

		if (is_sym(p, ".") && (peek_at(p, 1)->kind == T_IDENT || peek_at(p, 1)->kind == T_QIDENT))
		{
			p->pos++;
			e.name = peek(p)->text;	/* after a dot, keywords are names too */
			p->pos++;
		}
		else if (is_sym(p, "["))
		{
			Tok		   *t;

			p->pos++;
			t = peek(p);
			if (t->kind == T_NUMBER && strspn(t->text, "0123456789") == strlen(t->text))
			{
				long		v = strlen(t->text) > 9 ? -1 : atol(t->text);

				if (v < 0)
					DynValidationError("List index is not within the allowable range; index: [%s]", t->text);
				e.index = (int) v;
			}
			else if (t->kind == T_STRING)
				e.name = t->text;
			else
				unexpected(p);
			p->pos++;
			expect_sym(p, "]");
		}
		else
			break;
		if (n->npath >= cap)
		{
			cap *= 2;
			n->path = repalloc(n->path, sizeof(PqPathElem) * cap);
		}
		n->path[n->npath++] = e;
	}
	return n;
}

/* A path starting with a name. */
static PqNode *
parse_path(Parser *p)
{
	Tok		   *t = peek(p);

	if (t->kind == T_EOF || (t->kind == T_IDENT && is_reserved(t->text)) || t->kind == T_QIDENT ||
		t->kind == T_IDENT)
		return parse_path_rest(p, parse_name(p));
	malformed("Expected identifier for simple path");
}

/* Bind the next `?`. */
static PqNode *
bind_param(Parser *p)
{
	PqNode	   *n;

	p->pos++;
	if (p->nbound >= p->nparams)
	{
		p->nbound++;
		return make_value(NULL, NULL);	/* counted; reported after parsing */
	}
	n = make_value(pstrdup(p->params[p->nbound].json), p->params[p->nbound].type);
	n->param = p->nbound + 1;
	if (p->bound)
		p->bound[p->nbound] = n;
	p->nbound++;
	return n;
}

/* Elements of [ ... ], << ... >> or ( ... ) up to the closing symbol. */
static PqNode *
parse_sequence(Parser *p, PqNodeKind kind, const char *close)
{
	PqNode	   *n = make_node(kind);
	int			cap = 0;

	if (eat_sym(p, close))
		return n;
	do
	{
		add_arg(n, parse_expr(p), &cap);
	} while (eat_sym(p, ","));
	expect_sym(p, close);
	return n;
}

/* A tuple { 'k': v, ... }. */
static PqNode *
parse_tuple(Parser *p)
{
	PqNode	   *n = make_node(PQ_TUPLE);
	int			cap = 0;

	if (eat_sym(p, "}"))
		return n;
	do
	{
		Tok		   *t = peek(p);
		char	   *key;

		if (t->kind != T_STRING && t->kind != T_QIDENT)
		{
			if (t->kind == T_NUMBER || t->kind == T_PARAM || t->kind == T_IDENT)
				DynValidationError("Tuple keys must be of type String. Actual type: %s under root",
								   t->kind == T_NUMBER ? "DECIMAL" : t->kind == T_PARAM ? "PARAMETER" : "IDENTIFIER");
			unexpected(p);
		}
		key = t->text;
		p->pos++;
		expect_sym(p, ":");
		add_arg(n, parse_expr(p), &cap);
		n->keys[n->nargs - 1] = key;
	} while (eat_sym(p, ","));
	expect_sym(p, "}");
	return n;
}

static PqNode *parse_primary_inner(Parser *p);

/* A primary term, one nesting level down. */
static PqNode *
parse_primary(Parser *p)
{
	PqNode	   *n;

	nest(p);
	n = parse_primary_inner(p);
	p->depth--;
	return n;
}

/* A primary term: literal, parameter, path, function call, parenthesis, collection. */
static PqNode *
parse_primary_inner(Parser *p)
{
	Tok		   *t = peek(p);

	switch (t->kind)
	{
		case T_STRING:
			{
				StringInfoData b;

				p->pos++;
				initStringInfo(&b);
				appendStringInfoString(&b, "{\"S\":");
				escape_json(&b, t->text);
				appendStringInfoChar(&b, '}');
				return make_value(b.data, "S");
			}
		case T_NUMBER:
			p->pos++;
			return number_value(t->text, false);
		case T_PARAM:
			return bind_param(p);
		case T_QIDENT:
			p->pos++;
			return parse_path_rest(p, t->text);
		case T_IDENT:
			if (peek_at(p, 1)->kind == T_PUNCT && strcmp(peek_at(p, 1)->text, "(") == 0 &&
				!is_kw(p, "select"))
			{
				PqNode	   *f = make_node(PQ_FUNC);
				int			cap = 0;

				f->name = asc_tolower(t->text, strlen(t->text));
				p->pos += 2;
				if (strcmp(f->name, "exists") == 0 && is_kw(p, "select"))
					malformed("Unexpected term");	/* EXISTS(SELECT) is a statement */
				if (!eat_sym(p, ")"))
				{
					do
					{
						add_arg(f, parse_expr(p), &cap);
					} while (eat_sym(p, ","));
					expect_sym(p, ")");
				}
				return f;
			}
			if (eat_kw(p, "true"))
				return make_value("{\"BOOL\":true}", "BOOL");
			if (eat_kw(p, "false"))
				return make_value("{\"BOOL\":false}", "BOOL");
			if (eat_kw(p, "null"))
				return make_value("{\"NULL\":true}", "NULL");
			if (eat_kw(p, "missing"))
				return make_node(PQ_MISSING);
			if (is_reserved(t->text))
				malformed("Unexpected keyword");
			p->pos++;
			return parse_path_rest(p, t->text);
		case T_PUNCT:
			if (eat_sym(p, "("))
			{
				PqNode	   *e = parse_expr(p);

				expect_sym(p, ")");
				return e;
			}
			if (eat_sym(p, "["))
				return parse_sequence(p, PQ_LIST, "]");
			if (eat_sym(p, "{"))
				return parse_tuple(p);
			break;
		case T_OP:
			if (eat_sym(p, "<<"))
				return parse_sequence(p, PQ_BAG, ">>");
			break;
		default:
			break;
	}
	unexpected(p);
}

/* Unary minus (folded into number literals). */
static PqNode *
parse_unary(Parser *p)
{
	nest(p);
	p->depth--;
	if (is_sym(p, "-"))
	{
		p->pos++;
		if (peek(p)->kind == T_NUMBER)
		{
			Tok		   *t = peek(p);

			p->pos++;
			return number_value(t->text, true);
		}
		if (peek(p)->kind == T_EOF)
			malformed("Unexpected term");
		DynValidationError("Unsupported operator in Condition Expression. Operator: NEG");
	}
	if (is_sym(p, "+"))
	{
		PqNode	   *n;

		p->pos++;
		nest(p);
		n = parse_unary(p);
		p->depth--;
		return n;
	}
	return parse_primary(p);
}

/* The right operand of an infix operator. */
static PqNode *
parse_rhs(Parser *p, PqNode *(*fn) (Parser *))
{
	if (peek(p)->kind == T_EOF)
		malformed("Missing right-hand side expression of infix operator");
	return fn(p);
}

/* a + b - c */
static PqNode *
parse_additive(Parser *p)
{
	PqNode	   *n = parse_unary(p);

	for (;;)
	{
		int			op;

		if (is_sym(p, "+"))
			op = '+';
		else if (is_sym(p, "-"))
			op = '-';
		else
			return n;
		p->pos++;
		n = make_binary(PQ_ARITH, op, n, parse_rhs(p, parse_unary));
	}
}

/* The comparison operator at the cursor, or -1. */
static int
cmp_op(Parser *p)
{
	static const char *const ops[] = {"=", "<>", "<", "<=", ">", ">="};
	int			i;

	if (peek(p)->kind != T_OP)
		return -1;
	if (strcmp(peek(p)->text, "!=") == 0)
		return PQ_NE;
	for (i = 0; i < (int) lengthof(ops); i++)
		if (strcmp(peek(p)->text, ops[i]) == 0)
			return i;
	return -1;
}

/* IS [NOT] <type>: the type name, upper case. */
static char *
parse_is_type(Parser *p)
{
	static const char *const types[] = {
		"MISSING", "NULL", "BOOLEAN", "BOOL", "BLOB", "STRING", "NUMERIC", "STRUCT", "TUPLE",
		"LIST", "INT", "INTEGER", "INT4", "INT8", "DECIMAL", "FLOAT", "REAL", "DOUBLE", "BAG",
		"SEXP", "SYMBOL", "CLOB", "TIMESTAMP", "SMALLINT", "CHAR", "CHARACTER", "VARCHAR",
		"DATE", "TIME"
	};
	Tok		   *t = peek(p);
	int			i;

	if (t->kind == T_IDENT)
		for (i = 0; i < (int) lengthof(types); i++)
			if (pg_strcasecmp(t->text, types[i]) == 0)
			{
				p->pos++;
				if (strcmp(types[i], "DOUBLE") == 0)
					eat_kw(p, "precision");
				if (strcmp(types[i], "CHARACTER") == 0)
					eat_kw(p, "varying");
				return pstrdup(types[i]);
			}
	if (t->kind == T_EOF)
		malformed("Unexpected term");
	malformed("Expected type name");
}

/* comparison, BETWEEN, IN, IS, LIKE */
static PqNode *
parse_predicate(Parser *p)
{
	PqNode	   *left = parse_additive(p);
	int			op = cmp_op(p);
	bool		negated = false;

	if (op >= 0)
	{
		p->pos++;
		return make_binary(PQ_CMP, op, left, parse_rhs(p, parse_additive));
	}
	if (is_kw(p, "is"))
	{
		PqNode	   *n = make_node(PQ_IS);

		p->pos++;
		n->negated = eat_kw(p, "not");
		n->name = parse_is_type(p);
		n->nargs = 1;
		n->args = palloc(sizeof(PqNode *));
		n->args[0] = left;
		return n;
	}
	if (is_kw(p, "not") && (pg_strcasecmp(peek_at(p, 1)->text, "between") == 0 ||
							pg_strcasecmp(peek_at(p, 1)->text, "in") == 0 ||
							pg_strcasecmp(peek_at(p, 1)->text, "like") == 0) &&
		peek_at(p, 1)->kind == T_IDENT)
	{
		p->pos++;
		negated = true;
	}
	if (eat_kw(p, "between"))
	{
		PqNode	   *n = make_node(PQ_BETWEEN);

		n->negated = negated;
		n->nargs = 3;
		n->args = palloc(sizeof(PqNode *) * 3);
		n->args[0] = left;
		n->args[1] = parse_rhs(p, parse_additive);
		expect_kw(p, "and");
		n->args[2] = parse_rhs(p, parse_additive);
		return n;
	}
	if (eat_kw(p, "in"))
	{
		PqNode	   *list;

		if (eat_sym(p, "["))
			list = parse_sequence(p, PQ_LIST, "]");
		else if (eat_sym(p, "("))
			list = parse_sequence(p, PQ_LIST, ")");
		else if (peek(p)->kind == T_EOF)
			malformed("Missing right-hand side expression of infix operator");
		else
			list = parse_additive(p);
		{
			PqNode	   *n = make_binary(PQ_IN, 0, left, list);

			n->negated = negated;
			return n;
		}
	}
	if (eat_kw(p, "like"))
		DynValidationError("Unsupported operation: LIKE");
	if (negated)
		unexpected(p);
	return left;
}

/* NOT a */
static PqNode *
parse_not(Parser *p)
{
	if (eat_kw(p, "not"))
	{
		PqNode	   *n = make_node(PQ_NOT);

		nest(p);
		n->nargs = 1;
		n->args = palloc(sizeof(PqNode *));
		n->args[0] = parse_not(p);
		p->depth--;
		return n;
	}
	return parse_predicate(p);
}

/* a AND b */
static PqNode *
parse_and(Parser *p)
{
	PqNode	   *n = parse_not(p);

	while (eat_kw(p, "and"))
		n = make_binary(PQ_AND, 0, n, parse_rhs(p, parse_not));
	return n;
}

/* a OR b */
static PqNode *
parse_expr(Parser *p)
{
	PqNode	   *n = parse_and(p);

	while (eat_kw(p, "or"))
		n = make_binary(PQ_OR, 0, n, parse_rhs(p, parse_and));
	return n;
}

/* ---------------------------------------------------------------- statements */

/* FROM's source: "table" or "table"."index"; refuses aliases. */
static void
parse_source(Parser *p, PqStatement *st, bool allow_index)
{
	Tok		   *t = peek(p);

	if (t->kind == T_EOF || (t->kind == T_PUNCT && strcmp(t->text, ";") == 0) ||
		(t->kind == T_IDENT && is_reserved(t->text)))
	{
		if (st->kind == PQ_SELECT)
			unexpected(p);
		malformed("Expected identifier for simple path");
	}
	st->table = parse_name(p);
	if (is_sym(p, "."))
	{
		p->pos++;
		if (peek(p)->kind != T_IDENT && peek(p)->kind != T_QIDENT)
			malformed("Invalid path dot component in this operation, expecting either an IDENTIFIER or STAR.");
		st->index = peek(p)->text;
		p->pos++;
		if (is_sym(p, "."))
			DynValidationError("A path may contain at most 2 components in the FROM clause");
		if (!allow_index)
			DynValidationError("This operation is not supported on an index");
	}
	if (is_kw(p, "as") || (peek(p)->kind == T_IDENT && !is_reserved(peek(p)->text)) ||
		peek(p)->kind == T_QIDENT)
		DynValidationError("Aliasing is not supported");
	if (is_sym(p, ","))
		DynValidationError("Only select from a single table or index is supported.");
}

/* RETURNING (ALL|MODIFIED) (OLD|NEW) * */
static PqReturning
parse_returning(Parser *p)
{
	bool		all;
	bool		new;

	if (eat_kw(p, "all"))
		all = true;
	else if (eat_kw(p, "modified"))
		all = false;
	else
		unexpected(p);
	if (eat_kw(p, "new"))
		new = true;
	else if (eat_kw(p, "old"))
		new = false;
	else
		unexpected(p);
	if (!eat_sym(p, "*"))
		DynValidationError("Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause");
	if (is_sym(p, ","))
		DynValidationError("Invalid syntax with multiple returning elements in RETURNING clause");
	return all ? (new ? PQ_RET_ALL_NEW : PQ_RET_ALL_OLD) : (new ? PQ_RET_MODIFIED_NEW : PQ_RET_MODIFIED_OLD);
}

/* SELECT proj FROM source [WHERE e] [ORDER BY k [ASC|DESC], ...] */
static void
parse_select(Parser *p, PqStatement *st)
{
	st->kind = PQ_SELECT;
	if (eat_sym(p, "*"))
	{
		st->star = true;
		if (is_sym(p, ","))
			DynValidationError("Other attributes should not be present in the projection when '*' is used.");
	}
	else
	{
		int			cap = 4;

		if (is_kw(p, "value"))
			DynValidationError("Select projection doesn't support value or pivot keywords");
		st->proj = palloc(sizeof(PqNode *) * cap);
		do
		{
			if (is_sym(p, "*"))
				DynValidationError("Other attributes should not be present in the projection when '*' is used.");
			if (st->nproj >= cap)
			{
				cap *= 2;
				st->proj = repalloc(st->proj, sizeof(PqNode *) * cap);
			}
			st->proj[st->nproj++] = parse_path(p);
		} while (eat_sym(p, ","));
	}
	expect_kw(p, "from");
	parse_source(p, st, true);
	if (eat_kw(p, "where"))
		st->where = parse_expr(p);
	if (eat_kw(p, "order"))
	{
		int			cap = 2;

		expect_kw(p, "by");
		st->order = palloc(sizeof(PqNode *) * cap);
		st->order_desc = palloc(sizeof(bool) * cap);
		do
		{
			if (st->norder >= cap)
			{
				cap *= 2;
				st->order = repalloc(st->order, sizeof(PqNode *) * cap);
				st->order_desc = repalloc(st->order_desc, sizeof(bool) * cap);
			}
			st->order[st->norder] = parse_additive(p);
			st->order_desc[st->norder] = false;
			if (eat_kw(p, "desc"))
				st->order_desc[st->norder] = true;
			else
				eat_kw(p, "asc");
			st->norder++;
		} while (eat_sym(p, ","));
	}
}

/* INSERT INTO t VALUE {...} */
static void
parse_insert(Parser *p, PqStatement *st)
{
	st->kind = PQ_INSERT;
	expect_kw(p, "into");
	parse_source(p, st, false);
	if (eat_kw(p, "values") || is_sym(p, "(") || is_sym(p, "<<"))
		DynValidationError("Unsupported operation: Inserting multiple items in a single statement is not supported, use \"INSERT INTO tableName VALUE item\" instead");
	expect_kw(p, "value");
	st->value = parse_expr(p);
	if (eat_kw(p, "at"))
		DynValidationError("AT is not supported in insert statements.");
	if (is_kw(p, "on"))
		DynValidationError("Invalid conflict action. Only \"DO NOTHING\" action is supported.");
	if (eat_kw(p, "returning"))
		DynValidationError("RETURNING is not supported in INSERT");
}

/* UPDATE t SET a = v, ... REMOVE b ... WHERE e [RETURNING ...] */
static void
parse_update(Parser *p, PqStatement *st)
{
	int			cap = 4;

	st->kind = PQ_UPDATE;
	parse_source(p, st, false);
	st->assign = palloc(sizeof(PqAssign) * cap);
	for (;;)
	{
		bool		remove;

		if (eat_kw(p, "set"))
			remove = false;
		else if (eat_kw(p, "remove"))
			remove = true;
		else if (st->nassign == 0)
		{
			if (is_kw(p, "add") || is_kw(p, "delete"))
				DynValidationError("Only SET and REMOVE are supported in update expressions at this time");
			unexpected(p);
		}
		else
			break;
		do
		{
			PqAssign	a = {0};

			a.remove = remove;
			a.target = parse_path(p);
			if (!remove)
			{
				if (!eat_sym(p, "="))
					unexpected(p);
				a.value = parse_rhs(p, parse_predicate);
			}
			if (st->nassign >= cap)
			{
				cap *= 2;
				st->assign = repalloc(st->assign, sizeof(PqAssign) * cap);
			}
			st->assign[st->nassign++] = a;
		} while (eat_sym(p, ","));
	}
	if (eat_kw(p, "where"))
		st->where = parse_expr(p);
	if (eat_kw(p, "returning"))
		st->returning = parse_returning(p);
}

/* DELETE FROM t WHERE e [RETURNING ALL OLD *] */
static void
parse_delete(Parser *p, PqStatement *st)
{
	st->kind = PQ_DELETE;
	if (!eat_kw(p, "from"))
		malformed("Expected identifier for simple path");
	parse_source(p, st, false);
	if (eat_kw(p, "where"))
		st->where = parse_expr(p);
	if (eat_kw(p, "returning"))
		st->returning = parse_returning(p);
}

/* Parse one statement; bound (when not NULL) receives the nodes of its `?`. */
static PqStatement *
parse_statement(const char *text, int len, const PqParam *params, int nparams, PqNode **bound)
{
	Parser		p = {0};
	PqStatement *st = palloc0(sizeof(PqStatement));

	p.toks = lex(text, len, &p.ntoks);
	p.params = params;
	p.nparams = nparams;
	p.bound = bound;
	if (eat_kw(&p, "select"))
		parse_select(&p, st);
	else if (eat_kw(&p, "insert"))
		parse_insert(&p, st);
	else if (eat_kw(&p, "update"))
		parse_update(&p, st);
	else if (eat_kw(&p, "delete"))
		parse_delete(&p, st);
	else if (is_kw(&p, "exists") && peek_at(&p, 1)->kind == T_PUNCT && strcmp(peek_at(&p, 1)->text, "(") == 0)
	{
		p.pos += 2;
		expect_kw(&p, "select");
		parse_select(&p, st);
		expect_sym(&p, ")");
		st->kind = PQ_EXISTS;
	}
	else if (peek(&p)->kind == T_EOF)
		malformed("Unexpected term");
	else if (is_kw(&p, "upsert") || is_kw(&p, "replace") || is_kw(&p, "create") ||
			 is_kw(&p, "drop") || is_kw(&p, "alter") || is_kw(&p, "begin") || is_kw(&p, "commit"))
		malformed("Expected data manipulation");
	else
	{
		/* an expression alone, as PartiQL's parser reads it, is no statement */
		PqNode	   *e = parse_expr(&p);

		if (peek(&p)->kind != T_EOF)
			malformed("Unexpected token after expression");
		if (e->kind == PQ_IS)
			DynValidationError("Unsupported operation: IsType");
		malformed("Expected data manipulation");
	}
	if (peek(&p)->kind != T_EOF)
		malformed("Unexpected token after expression");
	if (p.nbound > nparams)
		DynValidationError("Number of parameters in request and statement don't match.");
	st->nparams = p.nbound;
	return st;
}

/* ---------------------------------------------------------------- statement cache */

/*
 * Parsed statements kept per backend, keyed by their text: an application
 * sends the same statements again and again with other parameters, and a
 * parse is a sixth of a SELECT by key.  The tree does not depend on the
 * catalog or on the parameters' values (the planner reads it, never changes
 * it); each use binds the new parameters to the `?` nodes.  Only statements
 * that parsed are kept; the oldest entry makes room.
 */
#define STATEMENT_CACHE_SIZE 64

typedef struct CachedStatement
{
	MemoryContext cxt;			/* owns the entry; NULL: empty slot */
	uint32		hash;
	char	   *text;
	int			len;
	PqStatement *stmt;
	int			nparams;
	PqNode	  **params;			/* the `?` nodes, in order */
} CachedStatement;

static CachedStatement statement_cache[STATEMENT_CACHE_SIZE];
static int	statement_cache_next = 0;

/* The cached parse of a statement text, or NULL. */
static CachedStatement *
cache_lookup(const char *text, int len, uint32 hash)
{
	int			i;

	for (i = 0; i < STATEMENT_CACHE_SIZE; i++)
	{
		CachedStatement *c = &statement_cache[i];

		if (c->cxt && c->hash == hash && c->len == len && memcmp(c->text, text, len) == 0)
			return c;
	}
	return NULL;
}

/* Keep the parse of a statement that parsed (parsed again in the cache's memory). */
static void
cache_store(const char *text, int len, uint32 hash, const PqParam *params, int nparams)
{
	CachedStatement *c = &statement_cache[statement_cache_next];
	MemoryContext cxt = AllocSetContextCreate(TopMemoryContext, "dynindex PartiQL statement",
											  ALLOCSET_SMALL_SIZES);
	MemoryContext old = MemoryContextSwitchTo(cxt);
	PqNode	  **bound = palloc0(sizeof(PqNode *) * (nparams + 1));
	PqStatement *st = parse_statement(text, len, params, nparams, bound);
	char	   *copy = pnstrdup(text, len);

	MemoryContextSwitchTo(old);
	if (c->cxt)
		MemoryContextDelete(c->cxt);
	c->cxt = cxt;
	c->hash = hash;
	c->text = copy;
	c->len = len;
	c->stmt = st;
	c->nparams = st->nparams;
	c->params = bound;
	statement_cache_next = (statement_cache_next + 1) % STATEMENT_CACHE_SIZE;
}

/* Parse one statement, binding params to its `?` in order (through the cache). */
PqStatement *
PqParse(const char *text, int len, const PqParam *params, int nparams)
{
	uint32		hash = hash_bytes((const unsigned char *) text, len);
	CachedStatement *c = cache_lookup(text, len, hash);
	PqStatement *st;
	int			i;

	if (c)
	{
		if (c->nparams > nparams)
			DynValidationError("Number of parameters in request and statement don't match.");
		for (i = 0; i < c->nparams; i++)
		{
			c->params[i]->json = (char *) params[i].json;
			c->params[i]->vtype = params[i].type;
		}
		return c->stmt;
	}
	st = parse_statement(text, len, params, nparams, NULL);
	cache_store(text, len, hash, params, nparams);
	return st;
}

