package integrate

import (
	"gopkg.in/yaml.v3"
)

// pos is a 1-based line and column in a file.
type pos struct{ Line, Column int }

// itemIndex maps each item id to the position of its mapping and of each of
// its fields, found from yaml.v3 node positions.
type itemIndex map[string]*itemPos

type itemPos struct {
	at     pos
	fields map[string]pos
	// quotes holds the positions of evidence[i].quote, and chunks of evidence[i].chunk.
	quotes []pos
	chunks []pos
}

func (ix itemIndex) item(id string) pos {
	if p, ok := ix[id]; ok {
		return p.at
	}
	return pos{1, 1}
}

func (ix itemIndex) field(id, field string) pos {
	if p, ok := ix[id]; ok {
		if f, ok := p.fields[field]; ok {
			return f
		}
		return p.at
	}
	return pos{1, 1}
}

func (ix itemIndex) evidence(id string, i int, quote bool) pos {
	if p, ok := ix[id]; ok {
		list := p.chunks
		if quote {
			list = p.quotes
		}
		if i < len(list) {
			return list[i]
		}
		return p.at
	}
	return pos{1, 1}
}

// indexNode walks the document and records every mapping that has an "id" key.
// The first occurrence of an id wins; duplicates are reported separately.
func indexNode(n *yaml.Node, ix itemIndex, dups map[string][]pos) {
	if n == nil {
		return
	}
	switch n.Kind {
	case yaml.DocumentNode, yaml.SequenceNode:
		for _, c := range n.Content {
			indexNode(c, ix, dups)
		}
	case yaml.MappingNode:
		var id string
		for i := 0; i+1 < len(n.Content); i += 2 {
			if n.Content[i].Value == "id" && n.Content[i+1].Kind == yaml.ScalarNode {
				id = n.Content[i+1].Value
			}
		}
		if id != "" {
			p := &itemPos{at: pos{n.Line, n.Column}, fields: map[string]pos{}}
			for i := 0; i+1 < len(n.Content); i += 2 {
				k, v := n.Content[i], n.Content[i+1]
				p.fields[k.Value] = pos{v.Line, v.Column}
				if k.Value == "evidence" && v.Kind == yaml.SequenceNode {
					for _, ev := range v.Content {
						q, c := pos{ev.Line, ev.Column}, pos{ev.Line, ev.Column}
						for j := 0; j+1 < len(ev.Content); j += 2 {
							switch ev.Content[j].Value {
							case "quote":
								q = pos{ev.Content[j+1].Line, ev.Content[j+1].Column}
							case "chunk":
								c = pos{ev.Content[j+1].Line, ev.Content[j+1].Column}
							}
						}
						p.quotes = append(p.quotes, q)
						p.chunks = append(p.chunks, c)
					}
				}
			}
			if _, seen := ix[id]; seen {
				dups[id] = append(dups[id], p.at)
			} else {
				ix[id] = p
			}
		}
		for i := 1; i < len(n.Content); i += 2 {
			indexNode(n.Content[i], ix, dups)
		}
	}
}
