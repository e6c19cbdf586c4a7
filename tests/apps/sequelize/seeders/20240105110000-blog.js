'use strict';
// A blog's worth of data, the same on every run: 6 authors, 60 posts, 240 comments.

const AUTHORS = 6;
const POSTS = 60;
const COMMENTS_PER_POST = 4;
const EPOCH = Date.UTC(2024, 0, 1);
const DAY = 24 * 60 * 60 * 1000;

module.exports = {
  async up(queryInterface) {
    const stamp = new Date(EPOCH);
    const authors = [];
    for (let i = 1; i <= AUTHORS; i++) {
      authors.push({ id: i, name: `Author ${i}`, email: `author${i}@example.org`,
                     createdAt: stamp, updatedAt: stamp });
    }
    const posts = [];
    const comments = [];
    for (let i = 1; i <= POSTS; i++) {
      const published = new Date(EPOCH + i * DAY);
      posts.push({ id: i, authorId: ((i - 1) % AUTHORS) + 1, title: `Post ${i}`,
                   body: `The body of post ${i}.`, publishedAt: published,
                   createdAt: published, updatedAt: published });
      for (let j = 1; j <= COMMENTS_PER_POST; j++) {
        comments.push({ postId: i, body: `Comment ${j} on post ${i}.`,
                        createdAt: published, updatedAt: published });
      }
    }
    await queryInterface.bulkInsert('Authors', authors);
    await queryInterface.bulkInsert('Posts', posts);
    await queryInterface.bulkInsert('Comments', comments);
    // The explicit ids above leave the sequences behind: the application's inserts come next.
    await queryInterface.sequelize.query(
      `select setval('"Authors_id_seq"', ${AUTHORS}), setval('"Posts_id_seq"', ${POSTS})`);
  },
  async down(queryInterface) {
    await queryInterface.bulkDelete('Comments', null, {});
    await queryInterface.bulkDelete('Posts', null, {});
    await queryInterface.bulkDelete('Authors', null, {});
  },
};
