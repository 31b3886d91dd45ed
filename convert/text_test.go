package convert

import "testing"

func TestUnprefixChapterLines(t *testing.T) {
	tests := []struct{ in, want string }{
		{"《》目录 第一回　灵根育孕源流出\n正文", "第一回　灵根育孕源流出\n正文"},
		{"《西游记》目录第二回 悟彻菩提", "第二回 悟彻菩提"},
		{"目录 第十二章 总结", "第十二章 总结"},
		{"他翻到目录，第一回写的是", "他翻到目录，第一回写的是"},
		{"目录\n第一章", "目录\n第一章"},
	}
	for _, tt := range tests {
		if got := unprefixChapterLines(tt.in); got != tt.want {
			t.Errorf("unprefixChapterLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
