'use strict';
// The blog's front page feed: the 20 latest posts with their author and comment count, as JSON
// on stdout (Sequelize's logging is off in config/config.json: stdout holds only the feed).
const { sequelize, Post, Author, Comment } = require('./models');

async function main() {
  const posts = await Post.findAll({
    attributes: ['id', 'title', 'publishedAt',
                 [sequelize.fn('count', sequelize.col('comments.id')), 'commentCount']],
    include: [
      { model: Author, as: 'author', attributes: ['id', 'name'] },
      { model: Comment, as: 'comments', attributes: [] },
    ],
    group: ['Post.id', 'author.id'],
    order: [['publishedAt', 'DESC']],
    limit: 20,
    subQuery: false,
  });
  const feed = posts.map((p) => ({
    id: p.id,
    title: p.title,
    publishedAt: p.publishedAt.toISOString(),
    author: p.author.name,
    comments: Number(p.get('commentCount')),
  }));
  process.stdout.write(JSON.stringify({ posts: feed }, null, 2) + '\n');
}

main()
  .catch((err) => {
    console.error(err);
    process.exitCode = 1;
  })
  .finally(() => sequelize.close());
