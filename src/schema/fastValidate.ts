/**
 * A fast validator compiled from an Effect Schema's AST, for the export hot path: per-record
 * `Schema.decodeUnknown` costs more than JSON.parse itself, while these closures are a few typeof
 * checks. It accepts and rejects exactly what the schema's encoded side does for the subset the
 * wire schemas use (structs, strings, numbers, booleans, literals, unions, arrays, records,
 * refinements such as patterns, Int and brands), and names the field path of the first problem.
 */
import { Option, SchemaAST, type Schema } from "effect"
import { formatPath, type FieldIssue } from "./decode.js"

type Check = (value: unknown, path: Array<PropertyKey>) => FieldIssue | undefined

const actual = (v: unknown) =>
  typeof v === "string" ? JSON.stringify(v) : v === undefined ? "undefined" : Array.isArray(v) ? "array" : JSON.stringify(v)
const issue = (path: ReadonlyArray<PropertyKey>, expected: string, value: unknown): FieldIssue => ({
  path: formatPath(path),
  message: `Expected ${expected}, actual ${actual(value)}`
})

const compile = (ast: SchemaAST.AST): Check => {
  switch (ast._tag) {
    case "StringKeyword":
      return (v, p) => (typeof v === "string" ? undefined : issue(p, "string", v))
    case "NumberKeyword":
      return (v, p) => (typeof v === "number" ? undefined : issue(p, "number", v))
    case "BooleanKeyword":
      return (v, p) => (typeof v === "boolean" ? undefined : issue(p, "boolean", v))
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => undefined
    case "UndefinedKeyword":
      return (v, p) => (v === undefined ? undefined : issue(p, "undefined", v))
    case "Literal":
      return (v, p) => (v === ast.literal ? undefined : issue(p, JSON.stringify(ast.literal), v))
    case "Union":
      return compileUnion(ast)
    case "Refinement": {
      const from = compile(ast.from)
      const expected = String(ast)
      return (v, p) => {
        const r = from(v, p)
        if (r) return r
        const failed = ast.filter(v, SchemaAST.defaultParseOption, ast)
        return Option.isSome(failed) ? { path: formatPath(p), message: `Expected ${expected}, actual ${actual(v)}` } : undefined
      }
    }
    case "Transformation":
      return compile(ast.from)
    case "Suspend":
      return (v, p) => compile(ast.f())(v, p)
    case "TupleType":
      return compileTuple(ast)
    case "TypeLiteral":
      return compileStruct(ast)
    default:
      throw new Error(`fastValidate: schema node ${ast._tag} is not supported`)
  }
}

/** A union: the issue of the member that got furthest into the value, else the members' names. */
const compileUnion = (ast: SchemaAST.Union): Check => {
  const members = ast.types.map(compile)
  const label = ast.types
    .map((t) => (t._tag === "Literal" ? JSON.stringify(t.literal) : t._tag.replace("Keyword", "").toLowerCase()))
    .join(" | ")
  return (v, p) => {
    let deepest: FieldIssue | undefined
    for (const m of members) {
      const r = m(v, p)
      if (!r) return undefined
      // report the member that got furthest into the value (an object member's inner field)
      if (!deepest || r.path.length > deepest.path.length) deepest = r
    }
    return deepest && deepest.path.length > formatPath(p).length ? deepest : issue(p, label, v)
  }
}

/** An array (or tuple): its elements, then the rest, each at its index. */
const compileTuple = (ast: SchemaAST.TupleType): Check => {
  const elements = ast.elements.map((e) => compile(e.type))
  const rest = ast.rest.map((r) => compile(r.type))
  return (v, p) => {
    if (!Array.isArray(v)) return issue(p, "array", v)
    for (let i = 0; i < v.length; i++) {
      const check = i < elements.length ? elements[i] : rest[0]
      if (!check) return issue([...p, i], "no element", v[i])
      const r = check(v[i], [...p, i])
      if (r) return r
    }
    return undefined
  }
}

/** A struct: each property (a missing one unless optional), then the index signatures' other keys. */
const compileStruct = (ast: SchemaAST.TypeLiteral): Check => {
  const props = ast.propertySignatures.map((ps) => ({ name: ps.name, optional: ps.isOptional, check: compile(ps.type) }))
  const index = ast.indexSignatures.map((is) => compile(is.type))
  const known = new Set(props.map((x) => x.name))
  return (v, p) => {
    if (typeof v !== "object" || v === null || Array.isArray(v)) return issue(p, "object", v)
    const o = v as Record<PropertyKey, unknown>
    for (const prop of props) {
      const has = Object.hasOwn(o, prop.name)
      if (!has) {
        if (prop.optional) continue
        return { path: formatPath([...p, prop.name]), message: "is missing" }
      }
      if (prop.optional && o[prop.name] === undefined) continue
      const r = prop.check(o[prop.name], [...p, prop.name])
      if (r) return r
    }
    if (index.length > 0) {
      for (const k of Object.keys(o)) {
        if (known.has(k)) continue
        for (const check of index) {
          const r = check(o[k], [...p, k])
          if (r) return r
        }
      }
    }
    return undefined
  }
}

type Test = (value: unknown) => boolean

const isUnknown = (ast: SchemaAST.AST) => ast._tag === "UnknownKeyword" || ast._tag === "AnyKeyword"

/** The allocation-free yes/no version of `compile`; the path is only worked out on failure. */
const compileTest = (ast: SchemaAST.AST): Test => {
  switch (ast._tag) {
    case "StringKeyword":
      return (v) => typeof v === "string"
    case "NumberKeyword":
      return (v) => typeof v === "number"
    case "BooleanKeyword":
      return (v) => typeof v === "boolean"
    case "UnknownKeyword":
    case "AnyKeyword":
      return () => true
    case "UndefinedKeyword":
      return (v) => v === undefined
    case "Literal": {
      const lit = ast.literal
      return (v) => v === lit
    }
    case "Union": {
      const members = ast.types.map(compileTest)
      return (v) => members.some((m) => m(v))
    }
    case "Refinement": {
      const from = compileTest(ast.from)
      // brands and other annotation-only refinements accept everything their base accepts
      if (SchemaAST.getBrandAnnotation(ast).pipe(Option.isSome) && ast.filter("", SchemaAST.defaultParseOption, ast).pipe(Option.isNone)) {
        return from
      }
      return (v) => from(v) && Option.isNone(ast.filter(v, SchemaAST.defaultParseOption, ast))
    }
    case "Transformation":
      return compileTest(ast.from)
    case "Suspend":
      return (v) => compileTest(ast.f())(v)
    case "TupleType": {
      const elements = ast.elements.map((e) => compileTest(e.type))
      const rest = ast.rest.length > 0 ? compileTest(ast.rest[0].type) : undefined
      const restUnknown = ast.rest.length > 0 && isUnknown(ast.rest[0].type)
      return (v) => {
        if (!Array.isArray(v)) return false
        if (v.length > elements.length && !rest) return false
        for (let i = 0; i < elements.length && i < v.length; i++) if (!elements[i](v[i])) return false
        if (restUnknown) return true
        for (let i = elements.length; i < v.length; i++) if (!rest!(v[i])) return false
        return true
      }
    }
    case "TypeLiteral": {
      const props = ast.propertySignatures.map((ps) => ({ name: ps.name, optional: ps.isOptional, test: compileTest(ps.type) }))
      const index = ast.indexSignatures.filter((is) => !isUnknown(is.type)).map((is) => compileTest(is.type))
      const known = new Set(props.map((x) => x.name))
      return (v) => {
        if (typeof v !== "object" || v === null || Array.isArray(v)) return false
        const o = v as Record<PropertyKey, unknown>
        for (const prop of props) {
          const value = o[prop.name]
          if (value === undefined) {
            if (prop.optional) continue
            if (!Object.hasOwn(o, prop.name)) return false
          }
          if (!prop.test(value)) return false
        }
        if (index.length > 0) for (const k of Object.keys(o)) if (!known.has(k) && !index.every((t) => t(o[k]))) return false
        return true
      }
    }
    default:
      throw new Error(`fastValidate: schema node ${ast._tag} is not supported`)
  }
}

/** Compiles `schema` (its encoded side, refinements kept) into a validator returning the first issue, or undefined. */
export const compileValidator = <A, I>(schema: Schema.Schema<A, I>): ((value: unknown) => FieldIssue | undefined) => {
  const ast = SchemaAST.encodedBoundAST(schema.ast)
  const test = compileTest(ast)
  const explain = compile(ast)
  return (value) => (test(value) ? undefined : (explain(value, []) ?? { path: "", message: "invalid" }))
}
