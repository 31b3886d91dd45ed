package runtime

import (
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"hash"
	"strings"

	"github.com/vibelife/vibe/knowledge"
	"github.com/vibelife/vibe/llm"
)

// transcriptNode names the stored conversation holding the state a chat
// has after the messages msgs of its transcript, for TurnRequest.
// TranscriptScope: a hash of the user, the scope and every user and
// assistant message (whitespace collapsed, so a client that re-indents
// what it resends still matches). It is "" for a transcript without
// messages: a chat's first turn starts with no state.
func transcriptNode(userID, scope string, msgs []llm.Message) string {
	chat := chatOf(msgs)
	if len(chat) == 0 {
		return ""
	}
	h := sha256.New()
	write(h, userID)
	write(h, scope)
	for _, m := range chat {
		write(h, m.Role)
		write(h, strings.Join(strings.Fields(m.Content), " "))
	}
	return "oai-" + hex.EncodeToString(h.Sum(nil)[:12])
}

// write adds s to h, length-prefixed so that no two sequences of strings
// hash alike.
func write(h hash.Hash, s string) {
	h.Write(binary.LittleEndian.AppendUint64(nil, uint64(len(s))))
	h.Write([]byte(s))
}

// carried returns the records that hold a conversation's state at the end
// of all: the active skill, and the protocol in progress with the messages
// of its run (its progress is read from them).
func carried(all []knowledge.StoredMessage) []knowledge.StoredMessage {
	var out []knowledge.StoredMessage
	skill, topic := "", ""
	for _, m := range all {
		switch m.Role {
		case roleSkill:
			skill = m.Content
		case roleTopic:
			topic = m.Content
		}
	}
	if skill != "" {
		out = append(out, knowledge.StoredMessage{Role: roleSkill, Content: skill})
	}
	if topic != "" {
		out = append(out, knowledge.StoredMessage{Role: roleTopic, Content: topic})
	}
	if recordedProtocol(all) == "" {
		return out
	}
	start := len(all) - 1
	for all[start].Role != roleProtocol {
		start--
	}
	for _, m := range all[start:] {
		if m.Role != roleSkill && m.Role != roleTopic {
			out = append(out, knowledge.StoredMessage{Role: m.Role, Content: m.Content})
		}
	}
	return out
}

// chatRecords returns a client's transcript as the chat messages of a
// stored history, for the parts of a turn that weigh the earlier messages.
func chatRecords(h []llm.Message) []knowledge.StoredMessage {
	out := make([]knowledge.StoredMessage, 0, len(h))
	for _, m := range chatOf(h) {
		out = append(out, knowledge.StoredMessage{Role: m.Role, Content: m.Content})
	}
	return out
}
