/*
 * expr_parse.c — tokenizer and recursive-descent parser for DynamoDB's five
 * expression kinds.  Produces the AST of expr_ast.h with text offsets; only
 * syntax is checked here (plus redundant parentheses, which DynamoDB reports
 * while reading).  Names, values and types are checked in expr_check.c.
 *
 * Grammar (precedence low to high: OR, AND, NOT, comparison/BETWEEN/IN/function):
 *   cond    := and (OR and)*
 *   and     := not (AND not)*
 *   not     := NOT not | primary
 *   primary := '(' cond ')' | '(' operand ')' tail | comparison
 *   comparison := operand (cmp operand | BETWEEN operand AND operand
 *                 | IN '(' operand (',' operand)* ')')  | function
 *   operand := :value | path | function | '(' operand ')'
 *   path    := (id | #name) ('.' (id | #name) | '[' int ']')*
 *   update  := (SET set (',' set)* | REMOVE path (',' path)*
 *               | ADD path :v (',' path :v)* | DELETE path :v (...))+
 *   set     := path '=' operand (('+' | '-') operand)?
 *   projection := path (',' path)*
 *
 * A '(' where a condition is expected may open a condition or an operand;
 * the parser reads a condition that may be a lone operand and decides at ')'.
 */
#include "postgres.h"

#include "miscadmin.h"

#include "common/errors.h"
#include "expr/expr_int.h"

typedef enum TokType
{
	T_EOF,
	T_ID,
	T_NAME,						/* #name */
	T_VALUE,					/* :value */
	T_INT,
	T_AND,
	T_OR,
	T_NOT,
	T_BETWEEN,
	T_IN,
	T_SET,
	T_REMOVE,
	T_ADD,
	T_DELETE,
	T_EQ,
	T_NE,
	T_LT,
	T_LE,
	T_GT,
	T_GE,
	T_LPAREN,
	T_RPAREN,
	T_LBRACK,
	T_RBRACK,
	T_COMMA,
	T_DOT,
	T_PLUS,
	T_MINUS,
	T_BAD
} TokType;

typedef struct Token
{
	TokType		type;
	int			start;
	int			end;
} Token;

typedef struct Parser
{
	const char *kind;
	const char *text;
	int			len;
	Token	   *toks;
	int			ntoks;
	int			pos;
	int			nclauses;
} Parser;

static const struct
{
	const char *word;
	TokType		type;
}			keywords[] = {
	{"AND", T_AND}, {"OR", T_OR}, {"NOT", T_NOT}, {"BETWEEN", T_BETWEEN},
	{"IN", T_IN}, {"SET", T_SET}, {"REMOVE", T_REMOVE}, {"ADD", T_ADD},
	{"DELETE", T_DELETE}
};

/* Whether c may continue a word (identifier, placeholder). */
static inline bool
is_word_char(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		(c >= '0' && c <= '9') || c == '_';
}

/* Length of the UTF-8 character starting at s (at most remaining bytes). */
static int
utf8_char_len(const char *s, int remaining)
{
	unsigned char c = (unsigned char) s[0];
	int			n;

	if (c < 0x80)
		n = 1;
	else if ((c & 0xE0) == 0xC0)
		n = 2;
	else if ((c & 0xF0) == 0xE0)
		n = 3;
	else if ((c & 0xF8) == 0xF0)
		n = 4;
	else
		n = 1;
	return n > remaining ? remaining : n;
}

/* Split the text into tokens, ending with T_EOF. */
static void
tokenize(Parser *p)
{
	const char *s = p->text;
	int			i = 0;
	int			cap = 16;

	p->toks = palloc(sizeof(Token) * cap);
	p->ntoks = 0;
	for (;;)
	{
		Token		t;

		while (i < p->len && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r'))
			i++;
		t.start = i;
		if (i >= p->len)
		{
			t.type = T_EOF;
			t.end = i;
		}
		else
		{
			char		c = s[i];

			if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'))
			{
				int			k;

				while (i < p->len && is_word_char(s[i]))
					i++;
				t.type = T_ID;
				for (k = 0; k < lengthof(keywords); k++)
				{
					if (strlen(keywords[k].word) == (size_t) (i - t.start) &&
						pg_strncasecmp(keywords[k].word, s + t.start, i - t.start) == 0)
					{
						t.type = keywords[k].type;
						break;
					}
				}
			}
			else if (c == '#' || c == ':')
			{
				i++;
				while (i < p->len && is_word_char(s[i]))
					i++;
				if (i == t.start + 1)
					t.type = T_BAD;
				else
					t.type = (c == '#') ? T_NAME : T_VALUE;
			}
			else if (c >= '0' && c <= '9')
			{
				i++;
				if (c != '0')
					while (i < p->len && s[i] >= '0' && s[i] <= '9')
						i++;
				t.type = T_INT;
			}
			else if (c == '<' && i + 1 < p->len && s[i + 1] == '>')
				t.type = T_NE, i += 2;
			else if (c == '<' && i + 1 < p->len && s[i + 1] == '=')
				t.type = T_LE, i += 2;
			else if (c == '>' && i + 1 < p->len && s[i + 1] == '=')
				t.type = T_GE, i += 2;
			else
			{
				switch (c)
				{
					case '=':
						t.type = T_EQ;
						break;
					case '<':
						t.type = T_LT;
						break;
					case '>':
						t.type = T_GT;
						break;
					case '(':
						t.type = T_LPAREN;
						break;
					case ')':
						t.type = T_RPAREN;
						break;
					case '[':
						t.type = T_LBRACK;
						break;
					case ']':
						t.type = T_RBRACK;
						break;
					case ',':
						t.type = T_COMMA;
						break;
					case '.':
						t.type = T_DOT;
						break;
					case '+':
						t.type = T_PLUS;
						break;
					case '-':
						t.type = T_MINUS;
						break;
					default:
						t.type = T_BAD;
						break;
				}
				i += (t.type == T_BAD) ? utf8_char_len(s + i, p->len - i) : 1;
			}
			t.end = i;
		}
		if (p->ntoks == cap)
		{
			cap *= 2;
			p->toks = repalloc(p->toks, sizeof(Token) * cap);
		}
		p->toks[p->ntoks++] = t;
		if (t.type == T_EOF)
			break;
	}
}

/* Raise DynamoDB's syntax error at token index at. */
static void
syntax_error(Parser *p, int at)
{
	Token	   *t = &p->toks[at];
	int			from = at > 0 ? p->toks[at - 1].start : 0;
	int			to = at + 1 < p->ntoks ? p->toks[at + 1].end : t->end;

	if (t->type == T_EOF)
		DynExprRaise(p->kind, "Syntax error; token: \"<EOF>\", near: \"%.*s\"",
					 to - from, p->text + from);
	DynExprRaise(p->kind, "Syntax error; token: \"%.*s\", near: \"%.*s\"",
				 t->end - t->start, p->text + t->start, to - from, p->text + from);
}

/* The current token. */
static inline Token *
peek(Parser *p)
{
	return &p->toks[p->pos];
}

/* The token k after the current one (EOF past the end). */
static inline Token *
peek_at(Parser *p, int k)
{
	int			i = p->pos + k;

	if (i >= p->ntoks)
		i = p->ntoks - 1;
	return &p->toks[i];
}

/* Consume a token of the given type or fail. */
static Token *
expect(Parser *p, TokType type)
{
	if (peek(p)->type != type)
		syntax_error(p, p->pos);
	return &p->toks[p->pos++];
}

/* A new node of the given kind spanning [start, end). */
static DynExpr *
make_node(DynExprKind kind, int nargs, int start, int end)
{
	DynExpr    *e = DynExprMakeNode(kind, nargs);

	e->start = start;
	e->end = end;
	return e;
}

/* Record a pair of parentheses around e; a second pair is redundant. */
static DynExpr *
wrap_parens(Parser *p, DynExpr *e, Token *open, Token *close)
{
	if (e->nparens > 0)
		DynExprRaise(p->kind, "The expression has redundant parentheses;");
	e->nparens++;
	e->start = open->start;
	e->end = close->end;
	return e;
}

/* path := (id | #name) ('.' (id | #name) | '[' int ']')* */
static DynExpr *
parse_path(Parser *p)
{
	Token	   *first = peek(p);
	DynExpr    *e;
	int			cap = 4;

	if (first->type != T_ID && first->type != T_NAME)
		syntax_error(p, p->pos);
	e = make_node(DYN_EXPR_PATH, 0, first->start, first->end);
	e->path = palloc0(sizeof(DynPathElem) * cap);
	for (;;)
	{
		Token	   *t = peek(p);
		DynPathElem *el;

		if (e->npath > 0 && t->type != T_DOT && t->type != T_LBRACK)
			break;
		if (e->npath == cap)
		{
			cap *= 2;
			e->path = repalloc(e->path, sizeof(DynPathElem) * cap);
		}
		el = &e->path[e->npath];
		memset(el, 0, sizeof(*el));
		if (e->npath == 0)
		{
			p->pos++;
		}
		else if (t->type == T_DOT)
		{
			p->pos++;
			t = peek(p);
			if (t->type != T_ID && t->type != T_NAME)
				syntax_error(p, p->pos);
			p->pos++;
		}
		else
		{
			Token	   *close;

			p->pos++;
			t = expect(p, T_INT);
			close = expect(p, T_RBRACK);
			el->is_index = true;
			el->start = t->start;
			el->end = t->end;
			/* digits; range is checked (and the index set) in expr_check.c */
			el->name = p->text + t->start;
			el->namelen = t->end - t->start;
			e->end = close->end;
			e->npath++;
			continue;
		}
		el->start = t->start;
		el->end = t->end;
		if (t->type == T_NAME)
			el->placeholder = pnstrdup(p->text + t->start, t->end - t->start);
		el->name = p->text + t->start;
		el->namelen = t->end - t->start;
		e->end = t->end;
		e->npath++;
	}
	return e;
}

static DynExpr *parse_operand(Parser *p);

/* function := id '(' operand (',' operand)* ')' */
static DynExpr *
parse_call(Parser *p)
{
	Token	   *name = &p->toks[p->pos++];
	DynExpr    *e;
	int			cap = 2;
	Token	   *close;

	expect(p, T_LPAREN);
	e = make_node(DYN_EXPR_FUNC, 0, name->start, name->end);
	e->op_start = name->start;
	e->op_end = name->end;
	e->fname = p->text + name->start;
	e->fnamelen = name->end - name->start;
	e->args = palloc(sizeof(DynExpr *) * cap);
	for (;;)
	{
		if (e->nargs == cap)
		{
			cap *= 2;
			e->args = repalloc(e->args, sizeof(DynExpr *) * cap);
		}
		e->args[e->nargs++] = parse_operand(p);
		if (peek(p)->type != T_COMMA)
			break;
		p->pos++;
	}
	close = expect(p, T_RPAREN);
	e->end = close->end;
	return e;
}

/* operand := :value | path | function | '(' operand ')' */
static DynExpr *
parse_operand(Parser *p)
{
	Token	   *t = peek(p);

	check_stack_depth();
	if (t->type == T_VALUE)
	{
		DynExpr    *e = make_node(DYN_EXPR_VALUE, 0, t->start, t->end);

		e->placeholder = pnstrdup(p->text + t->start, t->end - t->start);
		p->pos++;
		return e;
	}
	if (t->type == T_LPAREN)
	{
		Token	   *open = &p->toks[p->pos++];
		DynExpr    *inner = parse_operand(p);
		Token	   *close = expect(p, T_RPAREN);

		return wrap_parens(p, inner, open, close);
	}
	if (t->type == T_ID && peek_at(p, 1)->type == T_LPAREN)
		return parse_call(p);
	if (t->type == T_ID || t->type == T_NAME)
		return parse_path(p);
	syntax_error(p, p->pos);
	return NULL;				/* keep compiler quiet */
}

/* Map a comparator token to its operator; false when t is not one. */
static bool
comparator(TokType t, DynCmpOp *op)
{
	switch (t)
	{
		case T_EQ:
			*op = DYN_CMP_EQ;
			return true;
		case T_NE:
			*op = DYN_CMP_NE;
			return true;
		case T_LT:
			*op = DYN_CMP_LT;
			return true;
		case T_LE:
			*op = DYN_CMP_LE;
			return true;
		case T_GT:
			*op = DYN_CMP_GT;
			return true;
		case T_GE:
			*op = DYN_CMP_GE;
			return true;
		default:
			return false;
	}
}

/* Whether the current token continues a comparison after its first operand. */
static bool
at_comparison_tail(Parser *p)
{
	DynCmpOp	op;
	TokType		t = peek(p)->type;

	return comparator(t, &op) || t == T_BETWEEN || t == T_IN;
}

/*
 * The rest of a comparison after its first operand a.  With allow_bare, an
 * operand followed by ')' is returned marked bare (the caller decides).
 */
static DynExpr *
parse_comparison_tail(Parser *p, DynExpr *a, bool allow_bare)
{
	Token	   *t = peek(p);
	DynCmpOp	op;
	DynExpr    *e;

	if (comparator(t->type, &op))
	{
		p->pos++;
		e = make_node(DYN_EXPR_CMP, 2, a->start, 0);
		e->cmp = op;
		e->op_start = t->start;
		e->op_end = t->end;
		e->args[0] = a;
		e->args[1] = parse_operand(p);
		e->end = e->args[1]->end;
		return e;
	}
	if (t->type == T_BETWEEN)
	{
		p->pos++;
		e = make_node(DYN_EXPR_BETWEEN, 3, a->start, 0);
		e->op_start = t->start;
		e->op_end = t->end;
		e->args[0] = a;
		e->args[1] = parse_operand(p);
		expect(p, T_AND);
		e->args[2] = parse_operand(p);
		e->end = e->args[2]->end;
		return e;
	}
	if (t->type == T_IN)
	{
		int			cap = 4;
		Token	   *close;

		p->pos++;
		e = make_node(DYN_EXPR_IN, 0, a->start, 0);
		e->op_start = t->start;
		e->op_end = t->end;
		e->args = palloc(sizeof(DynExpr *) * cap);
		e->args[e->nargs++] = a;
		expect(p, T_LPAREN);
		for (;;)
		{
			if (e->nargs == cap)
			{
				cap *= 2;
				e->args = repalloc(e->args, sizeof(DynExpr *) * cap);
			}
			e->args[e->nargs++] = parse_operand(p);
			if (peek(p)->type != T_COMMA)
				break;
			p->pos++;
		}
		close = expect(p, T_RPAREN);
		e->end = close->end;
		return e;
	}
	if (a->kind == DYN_EXPR_FUNC && a->nparens == 0)
		return a;
	if (allow_bare && t->type == T_RPAREN)
	{
		a->bare = true;
		return a;
	}
	syntax_error(p, p->pos);
	return NULL;
}

static DynExpr *parse_or(Parser *p, bool allow_bare);

/* primary := '(' cond ')' | '(' operand ')' tail | comparison */
static DynExpr *
parse_primary(Parser *p, bool allow_bare)
{
	check_stack_depth();
	if (peek(p)->type == T_LPAREN)
	{
		Token	   *open = &p->toks[p->pos++];
		DynExpr    *inner = parse_or(p, true);
		Token	   *close = expect(p, T_RPAREN);

		if (inner->bare ||
			(inner->kind == DYN_EXPR_FUNC && inner->nparens == 0 && at_comparison_tail(p)))
		{
			/* it was a parenthesised operand */
			inner->bare = false;
			wrap_parens(p, inner, open, close);
			return parse_comparison_tail(p, inner, allow_bare);
		}
		return wrap_parens(p, inner, open, close);
	}
	return parse_comparison_tail(p, parse_operand(p), allow_bare);
}

/* not := NOT not | primary */
static DynExpr *
parse_not(Parser *p, bool allow_bare)
{
	Token	   *t = peek(p);

	check_stack_depth();
	if (t->type == T_NOT)
	{
		DynExpr    *e = make_node(DYN_EXPR_NOT, 1, t->start, 0);

		p->pos++;
		e->op_start = t->start;
		e->op_end = t->end;
		e->args[0] = parse_not(p, false);
		e->end = e->args[0]->end;
		return e;
	}
	return parse_primary(p, allow_bare);
}

/* and := not (AND not)* */
static DynExpr *
parse_and(Parser *p, bool allow_bare)
{
	DynExpr    *left = parse_not(p, allow_bare);

	while (peek(p)->type == T_AND && !left->bare)
	{
		Token	   *t = &p->toks[p->pos++];
		DynExpr    *e = make_node(DYN_EXPR_AND, 2, left->start, 0);

		e->op_start = t->start;
		e->op_end = t->end;
		e->args[0] = left;
		e->args[1] = parse_not(p, false);
		e->end = e->args[1]->end;
		left = e;
	}
	return left;
}

/* cond := and (OR and)* */
static DynExpr *
parse_or(Parser *p, bool allow_bare)
{
	DynExpr    *left = parse_and(p, allow_bare);

	while (peek(p)->type == T_OR && !left->bare)
	{
		Token	   *t = &p->toks[p->pos++];
		DynExpr    *e = make_node(DYN_EXPR_OR, 2, left->start, 0);

		e->op_start = t->start;
		e->op_end = t->end;
		e->args[0] = left;
		e->args[1] = parse_and(p, false);
		e->end = e->args[1]->end;
		left = e;
	}
	return left;
}

/* Append an action to an update node. */
static void
add_action(DynExpr *u, int *cap, DynUpdateOp op, DynExpr *path, DynExpr *value, int clause)
{
	DynUpdateAction *a;

	if (u->nactions == *cap)
	{
		*cap *= 2;
		u->actions = repalloc(u->actions, sizeof(DynUpdateAction) * *cap);
	}
	a = &u->actions[u->nactions++];
	memset(a, 0, sizeof(*a));
	a->op = op;
	a->path = path;
	a->value = value;
	a->clause = clause;
}

/*
 * set := path '=' value
 * value := operand (('+' | '-') operand)? | '(' value ')'
 * A parenthesised arithmetic value, SET c = (c - :v), is accepted as DynamoDB
 * accepts it; it cannot be an operand of another + or -.
 */
static DynExpr *
parse_set_value(Parser *p)
{
	DynExpr    *a;
	Token	   *t;

	check_stack_depth();
	if (peek(p)->type == T_LPAREN)
	{
		Token	   *open = &p->toks[p->pos++];
		DynExpr    *inner = parse_set_value(p);
		Token	   *close = expect(p, T_RPAREN);

		a = wrap_parens(p, inner, open, close);
		if (inner->kind == DYN_EXPR_ARITH)
			return a;
	}
	else
		a = parse_operand(p);
	t = peek(p);

	if (t->type == T_PLUS || t->type == T_MINUS)
	{
		DynExpr    *e = make_node(DYN_EXPR_ARITH, 2, a->start, 0);

		p->pos++;
		e->subtract = (t->type == T_MINUS);
		e->op_start = t->start;
		e->op_end = t->end;
		e->args[0] = a;
		e->args[1] = parse_operand(p);
		e->end = e->args[1]->end;
		return e;
	}
	return a;
}

/* update := clause+ */
static DynExpr *
parse_update(Parser *p)
{
	DynExpr    *u = make_node(DYN_EXPR_UPDATE, 0, 0, p->len);
	int			cap = 4;
	int			clause = 0;

	u->actions = palloc(sizeof(DynUpdateAction) * cap);
	do
	{
		Token	   *kw = peek(p);
		DynUpdateOp op;

		switch (kw->type)
		{
			case T_SET:
				op = DYN_UPD_SET;
				break;
			case T_REMOVE:
				op = DYN_UPD_REMOVE;
				break;
			case T_ADD:
				op = DYN_UPD_ADD;
				break;
			case T_DELETE:
				op = DYN_UPD_DELETE;
				break;
			default:
				syntax_error(p, p->pos);
				op = DYN_UPD_SET;	/* keep compiler quiet */
		}
		p->pos++;
		for (;;)
		{
			DynExpr    *path = parse_path(p);
			DynExpr    *value = NULL;
			int			first = u->nactions;

			if (op == DYN_UPD_SET)
			{
				expect(p, T_EQ);
				value = parse_set_value(p);
			}
			else if (op == DYN_UPD_ADD || op == DYN_UPD_DELETE)
			{
				Token	   *v = expect(p, T_VALUE);

				value = make_node(DYN_EXPR_VALUE, 0, v->start, v->end);
				value->placeholder = pnstrdup(p->text + v->start, v->end - v->start);
			}
			add_action(u, &cap, op, path, value, clause);
			/* remember the keyword token of the clause on its first action */
			if (first == u->nactions - 1 && (first == 0 || u->actions[first - 1].clause != clause))
			{
				u->actions[first].path->op_start = kw->start;
				u->actions[first].path->op_end = kw->end;
			}
			if (peek(p)->type != T_COMMA)
				break;
			p->pos++;
		}
		clause++;
	} while (peek(p)->type != T_EOF);
	u->nclauses = clause;
	return u;
}

/* projection := path (',' path)* */
static DynExpr *
parse_projection(Parser *p)
{
	DynExpr    *e = make_node(DYN_EXPR_PROJECTION, 0, 0, p->len);
	int			cap = 4;

	e->args = palloc(sizeof(DynExpr *) * cap);
	for (;;)
	{
		if (e->nargs == cap)
		{
			cap *= 2;
			e->args = repalloc(e->args, sizeof(DynExpr *) * cap);
		}
		e->args[e->nargs++] = parse_path(p);
		if (peek(p)->type != T_COMMA)
			break;
		p->pos++;
	}
	return e;
}

/* Tokenize and parse an expression of the given mode. */
DynExpr *
DynExprParseText(const char *kind, DynParseMode mode, const char *text, int len)
{
	Parser		p;
	DynExpr    *e;

	memset(&p, 0, sizeof(p));
	p.kind = kind;
	p.text = text;
	p.len = len;
	tokenize(&p);
	switch (mode)
	{
		case DYN_PARSE_UPDATE:
			e = parse_update(&p);
			break;
		case DYN_PARSE_PROJECTION:
			e = parse_projection(&p);
			break;
		default:
			e = parse_or(&p, false);
			break;
	}
	if (peek(&p)->type != T_EOF)
		syntax_error(&p, p.pos);
	e->exprkind = kind;
	pfree(p.toks);
	return e;
}
